"""ftorch.export: exported functions compute what the jitted ones do, in
this process (``Exported.call``), after ``serialize``/``deserialize``, and
from the ``.mlxfn`` file in a process that never imports ftorch."""

import json
import os
import subprocess
import sys

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch import export, nn, optim, random


def _mlp():
    model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3))
    params, _ = model.init(random.key(0), ft.ShapeDtypeStruct((1, 6), mx.float32))
    return model, params


def _close(a, b, tol=1e-5):
    for x, y in zip(ft.tree.leaves(a), ft.tree.leaves(b)):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(np.array(x), np.array(y), rtol=tol, atol=tol)


def _run_without_ftorch(tmp_path, mlxfn, inputs):
    """Run ``mlxfn`` on ``inputs`` in a child process that never imports
    ftorch; return its outputs."""
    mx.savez(str(tmp_path / "inputs.npz"), **{f"a{i}": x for i, x in enumerate(inputs)})
    script = f"""
import sys
import mlx.core as mx
f, metadata = mx.import_function({str(mlxfn)!r}, return_metadata=True)
inputs = mx.load({str(tmp_path / "inputs.npz")!r})
outs = f(*[inputs[f"a{{i}}"] for i in range({len(inputs)})])
mx.savez({str(tmp_path / "outputs.npz")!r}, **{{f"o{{i}}": o for i, o in enumerate(outs)}})
assert not any(m == "ftorch" or m.startswith("ftorch.") for m in sys.modules), "ftorch imported"
print(metadata)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""}, timeout=120)
    assert done.returncode == 0, done.stderr
    outs = mx.load(str(tmp_path / "outputs.npz"))
    return [outs[f"o{i}"] for i in range(len(outs))], json.loads(done.stdout)


def test_mlp_inference_runs_in_a_process_without_ftorch(tmp_path):
    model, params = _mlp()
    predict = ft.jit(lambda params, x: fnp.argmax(model(params, x), axis=-1))
    forward = ft.jit(lambda params, x: model(params, x))
    x = random.normal(random.key(1), (5, 6))
    exp = export.export(forward)(params, x)
    _close(exp.call(params, x), forward(params, x))
    exp.mlx_function(tmp_path / "mlp.mlxfn")
    leaves = ft.tree.leaves((params, x))
    outs, metadata = _run_without_ftorch(tmp_path, tmp_path / "mlp.mlxfn", leaves)
    _close(outs[0], forward(params, x))
    assert [i["name"] for i in metadata["inputs"]] == exp.in_names
    assert metadata["inputs"][-1] == {"name": "argument x", "aval": {"shape": [5, 6],
                                                                      "dtype": "float32"}}
    assert export.export(predict)(params, x).call(params, x).tolist() == \
        predict(params, x).tolist()


def test_train_step_exports_and_matches_over_several_steps(tmp_path):
    model, params = _mlp()
    opt = optim.adam(1e-2)

    @ft.jit
    def step(params, opt_state, x, y):
        loss, grads = ft.value_and_grad(
            lambda p: nn.losses.cross_entropy(model(p, x), y, reduction="mean"))(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    x = random.normal(random.key(2), (8, 6))
    y = mx.array([0, 1, 2, 0, 1, 2, 0, 1])
    state = opt.init(params)
    exp = export.export(step)(params, state, x, y)
    exp.mlx_function(tmp_path / "step.mlxfn")
    p_ref, s_ref, p_exp, s_exp = params, state, params, state
    for _ in range(3):
        p_ref, s_ref, loss_ref = step(p_ref, s_ref, x, y)
        p_exp, s_exp, loss_exp = exp.call(p_exp, s_exp, x, y)
        _close((p_exp, s_exp, loss_exp), (p_ref, s_ref, loss_ref), tol=1e-5)
    assert float(loss_exp) < float(step(params, state, x, y)[2])  # it trains
    # Optimizer states (ftorch's namedtuples) survive serialize/deserialize.
    back = export.deserialize(exp.serialize())
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    _close(back.call(params, state, x, y), step(params, state, x, y))
    outs, _ = _run_without_ftorch(tmp_path, tmp_path / "step.mlxfn",
                                  ft.tree.leaves((params, state, x, y)))
    _close(outs, ft.tree.leaves(step(params, state, x, y)))


def test_vmapped_per_example_gradients_export():
    w = random.normal(random.key(3), (4, 2))
    per_example = ft.jit(ft.vmap(ft.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w) ** 2)),
                                 in_axes=(None, 0)))
    x = random.normal(random.key(4), (7, 4))
    _close(export.export(per_example)(w, x).call(w, x), per_example(w, x))


def test_broadcast_constants_are_written_whole():
    # Folding leaves broadcast (stride-0) constants in graphs: the gradient
    # of a sum holds one; MLX's exporter would write its one element only.
    f = ft.jit(ft.grad(lambda w, x: fnp.sum((x @ w) ** 2)))
    w, x = mx.ones((3, 1)), mx.ones((4, 3))
    assert export.export(f)(w, x).call(w, x).reshape(-1).tolist() == [24.0, 24.0, 24.0]


def test_symbolic_batch_dimension(tmp_path):
    model, params = _mlp()
    forward = ft.jit(lambda params, x: nn.functional.softmax(model(params, x), axis=-1))
    spec = ft.ShapeDtypeStruct(export.symbolic_shape("batch, 6"), mx.float32)
    exp = export.export(forward)(params, spec)
    assert exp.shapeless and exp.out_avals[0].shape == ("batch", 3)
    for n in (1, 3, 17):
        x = random.normal(random.key(n), (n, 6))
        _close(exp.call(params, x), forward(params, x))
    exp.mlx_function(tmp_path / "poly.mlxfn")
    x = random.normal(random.key(9), (13, 6))
    outs, _ = _run_without_ftorch(tmp_path, tmp_path / "poly.mlxfn", ft.tree.leaves((params, x)))
    _close(outs[0], forward(params, x))
    with pytest.raises(ValueError, match="argument x has size 5 on axis 1"):
        exp.call(params, mx.ones((2, 5)))


def test_a_size_baked_into_the_graph_is_refused_naming_the_line():
    def f(x):
        return fnp.broadcast_to(x.sum(axis=1, keepdims=True), (x.shape[0], 8))  # baked in
    spec = ft.ShapeDtypeStruct(export.symbolic_shape("b, 4"), mx.float32)
    with pytest.raises(ValueError, match=r"not polymorphic in 'b': broadcast_to at "
                                         r".*test_export.py:\d+ \(return fnp.broadcast_to"):
        export.export(ft.jit(f))(spec)


def test_reshapes_follow_the_symbolic_dimension():
    spec = ft.ShapeDtypeStruct(export.symbolic_shape("b, 4"), mx.float32)
    for g in (lambda x: fnp.reshape(x, (-1, 2)).sum(axis=-1),
              lambda x: fnp.reshape(x, (x.shape[0] * 2, 2)).sum(axis=-1)):
        exp = export.export(ft.jit(g))(spec)
        assert exp.out_avals[0].shape == ("2*b",)
        x = mx.arange(12.0).reshape(3, 4)
        assert exp.call(x).tolist() == g(x).tolist()


def test_symbols_must_agree_between_arguments():
    exp = export.export(ft.jit(lambda x, y: x + y))(
        ft.ShapeDtypeStruct(("n",), mx.float32), ft.ShapeDtypeStruct(("n",), mx.float32))
    assert exp.call(mx.ones(4), mx.ones(4)).tolist() == [2.0] * 4
    with pytest.raises(ValueError, match="dimension 'n' is 4 in argument x but 3 in argument y"):
        exp.call(mx.ones(4), mx.ones(3))


def test_host_driven_equations_are_refused():
    def f(x):
        return lax.while_loop(lambda c: fnp.sum(c) < 10.0, lambda c: c * 2.0, x)
    with pytest.raises(ValueError, match=r"holds 'while' \(at .*test_export.py"):
        export.export(ft.jit(f))(mx.ones(2))
    g = ft.jit(lambda x: (ft.debug.print("{}", x), x * 2)[1])
    with pytest.raises(ValueError, match="holds 'debug_callback'"):
        export.export(g)(mx.ones(2))


def test_serialize_round_trip():
    model, params = _mlp()
    f = ft.jit(lambda params, x, *, scale: {"logits": model(params, x) * scale, "n": x.shape[0]},
               static_argnames="scale")
    x = random.normal(random.key(5), (2, 6))
    exp = export.export(f)(params, x, scale=2.0)
    back = export.deserialize(exp.serialize())
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    assert back.in_avals == exp.in_avals and back.out_names == exp.out_names
    _close(back.call(params, x)["logits"], f(params, x, scale=2.0)["logits"])
    assert back.graph is None
    with pytest.raises(ValueError, match="no graph"):
        back.to_onnx()
    with pytest.raises(ValueError, match="not written by Exported.serialize"):
        export.deserialize(b"not an export")


def test_call_checks_structure_and_dtypes():
    exp = export.export(ft.jit(lambda p: p["w"] * 2.0))({"w": mx.ones(3)})
    with pytest.raises(TypeError, match="exported for arguments of structure"):
        exp.call({"v": mx.ones(3)})
    with pytest.raises(TypeError, match=r"argument p\['w'\] was exported as f32\[3\], got "
                                        r"i32\[3\]"):
        exp.call({"w": mx.ones(3, mx.int32)})


def test_python_scalar_arguments_stay_arguments():
    f = ft.jit(lambda x, lr: x * lr)
    exp = export.export(f)(mx.ones(2), 0.5)
    assert exp.call(mx.ones(2), 0.25).tolist() == [0.25, 0.25]


def test_symbolic_shape_parsing():
    assert export.symbolic_shape("(b, 3)") == ("b", 3)
    with pytest.raises(ValueError, match="neither a size nor a dimension name"):
        export.symbolic_shape("b, 3x")


def test_to_onnx_runs_in_onnxruntime_with_the_leaf_names(tmp_path):
    import onnxruntime

    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          lambda x: x.reshape(x.shape[0], -1), nn.Linear(4 * 4 * 4, 3))
    params, _ = model.init(random.key(0), ft.ShapeDtypeStruct((1, 8, 8, 1), mx.float32))
    forward = ft.jit(lambda params, x: nn.functional.log_softmax(model(params, x), axis=-1))
    x = random.normal(random.key(1), (2, 8, 8, 1))
    exp = export.export(forward)(params, x)
    onnx_model = exp.to_onnx(tmp_path / "cnn.onnx")
    assert (tmp_path / "cnn.onnx").stat().st_size > 0
    names = [i.name for i in onnx_model.graph.input]
    assert names[-1] == "x" and any(n.startswith("params.") for n in names)
    session = onnxruntime.InferenceSession(str(tmp_path / "cnn.onnx"),
                                           providers=["CPUExecutionProvider"])
    feed = {n: np.array(v) for n, v in zip(names, ft.tree.leaves((params, x)))}
    np.testing.assert_allclose(session.run(None, feed)[0], np.array(forward(params, x)),
                               rtol=1e-5, atol=1e-5)
    _close(exp.call(params, x), forward(params, x))  # pooling windows without strided views
    # MLX's shapeless export cannot resize slices (the pooling windows): a clear error.
    with pytest.raises(ValueError, match="Slice cannot infer output shapes.*export at fixed"):
        export.export(forward)(params, ft.ShapeDtypeStruct(("b", 8, 8, 1), mx.float32))
    mlp, mlp_params = _mlp()
    poly = export.export(ft.jit(mlp))(mlp_params, ft.ShapeDtypeStruct(("b", 6), mx.float32))
    with pytest.raises(ValueError, match="fixed shapes only"):
        poly.to_onnx()


def test_a_gradient_over_a_symbolic_batch():
    # The seed of a sum's gradient is a constant of ones the size of the batch:
    # the exported file makes it from the batch's size.
    loss = lambda w, x: fnp.sum(fnp.tanh(x @ w) ** 2)  # noqa: E731
    grad = ft.jit(ft.grad(loss))
    w = random.normal(random.key(0), (3, 2))
    exp = export.export(grad)(w, ft.ShapeDtypeStruct(("b", 3), mx.float32))
    for n in (1, 4, 13):
        x = random.normal(random.key(n), (n, 3))
        _close(exp.call(w, x), grad(w, x))
    # A mean's 1/n is a value, not a shape: refused, naming the line.
    mean_grad = ft.jit(ft.grad(lambda w, x: fnp.mean(fnp.tanh(x @ w))))
    with pytest.raises(ValueError, match="not polymorphic in 'b'.*test_export.py"):
        export.export(mean_grad)(w, ft.ShapeDtypeStruct(("b", 3), mx.float32))


def test_registered_node_types_serialize():
    import collections

    Batch = collections.namedtuple("Batch", "x y")

    class Scaled:
        def __init__(self, value, scale):
            self.value, self.scale = value, scale

    ft.tree.register_node(Scaled, lambda s: ((s.value,), s.scale),
                          lambda scale, children: Scaled(children[0], scale))
    f = ft.jit(lambda b, s: Scaled(b.x * s.scale + b.y + s.value, s.scale))
    args = (Batch(mx.ones(2), mx.ones(2)), Scaled(mx.ones(2), 3.0))
    exp = export.export(f)(*args)
    with pytest.raises(TypeError, match="holds a Batch"):
        exp.serialize()
    export.register_namedtuple_serialization(Batch, serialized_name="test_export.Batch")
    with pytest.raises(TypeError, match="holds a Scaled"):
        exp.serialize()
    export.register_pytree_node_serialization(
        Scaled, serialized_name="test_export.Scaled",
        serialize_auxdata=lambda scale: repr(scale).encode(),
        deserialize_auxdata=lambda data: float(data.decode()))
    back = export.deserialize(exp.serialize())
    out = back.call(*args)
    assert isinstance(out, Scaled) and out.scale == 3.0 and out.value.tolist() == [5.0, 5.0]
    with pytest.raises(ValueError, match="registered for serialization already"):
        export.register_namedtuple_serialization(Batch, serialized_name="test_export.Batch")
