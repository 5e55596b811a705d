"""Train a small CNN on scikit-learn's 8x8 digits, checkpoint it, reload it
from the file alone, and report held-out accuracy.

Everything is a pure function of explicit pytrees: the model
(``ftorch.nn``: convolutions, batch norm, pooling, dropout), the optimizer
(``ftorch.optim.adamw`` with a warmup-cosine schedule), the data order
(``ftorch.data``, shuffled by key each epoch), and one jitted train step.

Run: python examples/train_digits.py [--epochs N] [--batch-size B] [--seed S]
     [--lr LR] [--out-dir DIR]   (about 10 s on 2 CPU cores; exits 1
     below --min-accuracy)

Data-parallel on N processes (``ftorch.distributed``): each process takes
its shard of every global batch of --batch-size examples, gradients are
averaged across processes inside the jitted step, rank 0 prints and saves:
     mlx.launch -n 2 --backend ring examples/train_digits.py --distributed
"""

# ruff: noqa: E402, I001  (the clock starts before the imports; ftorch goes before
# mlx.core: it loads the fast BLAS)
import time

START = time.perf_counter()

import argparse
import os
import sys

import ftorch as ft
import ftorch.data as data
import ftorch.distributed as dist
import ftorch.nn as nn
import ftorch.numpy as fnp
import ftorch.optim as optim
import ftorch.random as random
import mlx.core as mx
import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm


def make_model(dropout: float = 0.25) -> nn.Sequential:
    """Two conv blocks (3x3 conv, batch norm, ReLU, 2x2 max pool) and a
    two-layer classifier, on ``(N, 8, 8, 1)`` images."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm(64), nn.ReLU(), nn.MaxPool2d(2),
        lambda x: x.reshape(x.shape[0], -1),
        nn.Dropout(dropout), nn.Linear(64 * 2 * 2, 128), nn.ReLU(),
        nn.Dropout(dropout), nn.Linear(128, 10),
    )


def load_data(seed: int) -> tuple[dict, dict]:
    """The 1797 digits as float32 ``(N, 8, 8, 1)`` images in [0, 1] and int32
    labels, split 80/20 at random (by ``seed``) into train and test."""
    digits = load_digits()
    everything = {"x": digits.images.astype(np.float32)[..., None] / 16.0,
                  "y": digits.target.astype(np.int32)}
    train, test = data.split(everything, [0.8, 0.2], key=random.key(seed))
    return train, test


def make_optimizer(lr: float, weight_decay: float,
                   total_steps: int) -> optim.GradientTransformation:
    schedule = optim.warmup_cosine_decay_schedule(
        0.0, lr, warmup_steps=max(1, total_steps // 10), decay_steps=total_steps)
    # No weight decay on biases and batch-norm scales: only on >= 2-d weights.
    decay_mask = lambda params: ft.tree.map(lambda p: p.ndim >= 2, params)  # noqa: E731
    return optim.adamw(schedule, weight_decay=weight_decay, mask=decay_mask)


def loss_fn(model, params, state, batch, key):
    logits, state = model.apply(params, state, batch["x"], key=key, train=True)
    loss = nn.losses.cross_entropy(logits, batch["y"], reduction="mean")
    return loss, (state, logits)


def make_steps(model: nn.Sequential, opt: optim.GradientTransformation,
               distributed: bool = False, precision: str = "float32"):
    # Mixed precision: the products in bfloat16, the parameters float32 masters.
    compute_loss = loss_fn if precision == "float32" else ft.amp.autocast(loss_fn, precision)

    @ft.jit
    def train_step(params, state, opt_state, batch, key):
        if distributed:  # this process's share of the global batch
            batch = dist.shard_batch(batch)
        (loss, (state, logits)), grads = ft.value_and_grad(
            lambda p: compute_loss(model, p, state, batch, key), has_aux=True)(params)
        if distributed:
            # Averaged gradients (a few bucketed all-reduces) give every
            # process the same update; batch-norm statistics are averaged
            # too, so that the processes' models stay identical.
            grads = dist.all_mean_grads(grads)
            state = dist.all_mean(state)
            loss = dist.all_mean(loss)
        updates, opt_state = opt.update(grads, opt_state, params)
        params = optim.apply_updates(params, updates)
        correct = fnp.sum(fnp.argmax(logits, axis=-1) == batch["y"])
        if distributed:
            correct = dist.all_sum(correct)
        return params, state, opt_state, loss, correct

    @ft.jit
    def predict(params, state, x):
        logits, _ = model.apply(params, state, x, train=False)
        return fnp.argmax(logits, axis=-1)

    return train_step, predict


def accuracy(predict, params, state, split: dict, batch_size: int = 512) -> float:
    correct = 0
    for batch in data.batches(split, batch_size):
        correct += int(fnp.sum(predict(params, state, batch["x"]) == batch["y"]).item())
    return correct / len(split["y"])


def train(args: argparse.Namespace) -> str:
    """Train, save a checkpoint, return its path. With ``--distributed``,
    every process runs this on the same global batches (the same key orders
    them), each computing on its shard; only rank 0 prints and saves."""
    train_set, test_set = load_data(args.seed)
    model = make_model()
    key_init, key_data, key_dropout = random.split(random.key(args.seed), 3)
    params, state = model.init(key_init, ft.ShapeDtypeStruct((1, 8, 8, 1), mx.float32))
    # Distributed, every global batch must split evenly: the short last one is dropped.
    loader = data.DataLoader(train_set, args.batch_size, shuffle=True, key=key_data,
                             drop_last=args.distributed)
    opt = make_optimizer(args.lr, args.weight_decay, args.epochs * len(loader))
    opt_state = opt.init(params)
    train_step, predict = make_steps(model, opt, args.distributed, args.precision)
    rank = dist.rank() if args.distributed else 0
    log = print if rank == 0 else lambda *a, **k: None

    log(f"digits: {len(train_set['y'])} train, {len(test_set['y'])} test; "
        f"{nn.utils.count_params(params):,} parameters; {args.epochs} epochs of "
        f"{len(loader)} steps" + (f"; {dist.size()} processes, "
                                  f"{args.batch_size // dist.size()} examples each per step"
                                  if args.distributed else ""), flush=True)
    step, first_step_s = 0, None
    bar = tqdm(total=args.epochs * len(loader), unit="step", disable=args.quiet or rank != 0)
    for epoch in range(args.epochs):
        total_loss, total_correct, seen = 0.0, 0, 0
        for batch in loader.epoch(epoch):
            key = random.fold_in(key_dropout, step)
            if args.distributed:  # each process its own dropout masks
                key = random.fold_in(key, rank)
            mx.reset_peak_memory()  # the bar shows each step's peak
            params, state, opt_state, loss, correct = train_step(
                params, state, opt_state, batch, key)
            total_loss += loss.item() * len(batch["y"])
            total_correct += correct.item()
            seen += len(batch["y"])
            step += 1
            first_step_s = first_step_s or time.perf_counter() - START
            bar.set_postfix(epoch=epoch + 1, loss=f"{total_loss / seen:.4f}",
                            train_acc=f"{total_correct / seen:.3f}",
                            lr=f"{opt_state.hyperparams['learning_rate'].item():.2e}",
                            mem=f"{mx.get_peak_memory() / 2**20:.1f}MiB", refresh=False)
            bar.update(1)
        if args.distributed:  # cheap: one checksum per leaf, all gathered at once
            dist.check_identical({"params": params, "state": state})
    bar.close()
    log(f"first step done {first_step_s:.1f} s after start", flush=True)
    if rank == 0:
        print(f"train accuracy {accuracy(predict, params, state, train_set):.4f}, "
              f"test accuracy {accuracy(predict, params, state, test_set):.4f} "
              f"(before saving)", flush=True)

    path = os.path.join(args.out_dir, "digits.safetensors")
    checkpoint = {"params": params, "state": state, "opt_state": opt_state,
                  "epoch": mx.array(args.epochs)}
    if args.distributed:
        if rank == 0:
            os.makedirs(args.out_dir, exist_ok=True)
        dist.save(path, checkpoint)  # rank 0 writes; the others wait for it
    else:
        os.makedirs(args.out_dir, exist_ok=True)
        ft.save(path, checkpoint)
    log(f"saved {path} ({os.path.getsize(path) / 1e6:.2f} MB)", flush=True)
    return path


def evaluate(path: str, seed: int) -> float:
    """Test accuracy of the checkpoint at ``path``, from nothing but the file:
    a new model, a template of shapes (no arrays computed), the loaded
    parameters and batch-norm statistics."""
    model = make_model()
    template = ft.eval_shape(
        lambda: model.init(random.key(0), ft.ShapeDtypeStruct((1, 8, 8, 1), mx.float32)))
    params, state = template
    loaded = ft.load(path, like={"params": params, "state": state,
                                 "opt_state": _opt_state_like(params),
                                 "epoch": ft.ShapeDtypeStruct((), mx.int32)})
    _, predict = make_steps(model, optim.identity())
    _, test_set = load_data(seed)
    return accuracy(predict, loaded["params"], loaded["state"], test_set)


def _opt_state_like(params):
    """The optimizer state's structure for ``params`` (shapes only)."""
    opt = make_optimizer(1e-3, 1e-4, 10)
    return ft.eval_shape(opt.init, params)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=25, help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=64, help="examples per step")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the split, the initialisation, the data order and dropout")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    parser.add_argument("--weight-decay", type=float, default=1e-4,
                        help="AdamW's decoupled weight decay (on weights of 2+ axes)")
    parser.add_argument("--out-dir", default="runs/digits", help="where the checkpoint goes")
    parser.add_argument("--min-accuracy", type=float, default=0.97,
                        help="exit with status 1 below this reloaded test accuracy")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                        help="train under ft.amp.autocast in bfloat16 (evaluation in float32)")
    parser.add_argument("--distributed", action="store_true",
                        help="data-parallel over the processes of mlx.launch: each takes "
                             "batch-size / processes examples of every batch")
    args = parser.parse_args(argv)
    if args.distributed:
        dist.init()
        if args.batch_size % dist.size():
            parser.error(f"--batch-size {args.batch_size} must be a multiple of the "
                         f"{dist.size()} processes")

    path = train(args)
    if args.distributed:
        # Rank 0 evaluates its checkpoint (other machines may not see the
        # file) and every process exits with the same status.
        acc = evaluate(path, args.seed) if dist.rank() == 0 else 0.0
        acc = dist.broadcast(mx.array(acc)).item()
        if dist.rank() != 0:
            return 0 if acc >= args.min_accuracy else 1
    else:
        acc = evaluate(path, args.seed)
    print(f"reloaded checkpoint: test accuracy {acc:.4f} "
          f"({time.perf_counter() - START:.1f} s in all)", flush=True)
    return 0 if acc >= args.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main())
