"""The primitives, one module per family. Each primitive's MLX
implementation and its rules (shape, JVP, VJP, batching) sit side by side
where it is defined; ``ftorch.core.registry`` lists them all."""
