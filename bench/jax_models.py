"""The JAX peer's models for bench/peer_inference.py: an ONNX graph turned into a
jax.numpy / lax function, op by op, with the weights of its initializers.

function_from_onnx(path) returns f(x) -> output that jax.jit traces once: the ONNX
nodes only drive the tracing, XLA compiles (and fuses) the resulting program, so the
compiled code is what a hand-written jax.numpy model of the same layers gives. Reading
the weights from the ONNX file keeps them identical to what ONNX Runtime and Tessera
run. Only the ops the five benchmark models export to are mapped (Gemm, MatMul, Conv,
pooling, the elementwise ops of LayerNorm and GELU, Split/Reshape/Transpose, Softmax,
Where...); any other op raises NotImplementedError naming it, which the peer reports
as "cannot run this model".
"""

import jax
import jax.numpy as jnp
import numpy as np
import onnx
from onnx import numpy_helper


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _pads(pads, rank):
    # ONNX: [begin_0, begin_1, ..., end_0, end_1, ...] over the spatial dims.
    pads = list(pads) if pads else [0] * (2 * rank)
    return [(pads[i], pads[i + rank]) for i in range(rank)]


def _conv(x, w, b, a):
    rank = w.ndim - 2
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("Conv auto_pad")
    y = jax.lax.conv_general_dilated(
        x, w, window_strides=a.get("strides", [1] * rank), padding=_pads(a.get("pads"), rank),
        rhs_dilation=a.get("dilations", [1] * rank), feature_group_count=a.get("group", 1),
        dimension_numbers=("NCHW", "OIHW", "NCHW"))
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * rank)
    return y


def _max_pool(x, a):
    if a.get("ceil_mode", 0) or any(d != 1 for d in a.get("dilations", [])):
        raise NotImplementedError("MaxPool ceil_mode / dilations")
    k = a["kernel_shape"]
    rank = len(k)
    strides = a.get("strides", [1] * rank)
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1) + tuple(k), (1, 1) + tuple(strides),
                                 [(0, 0), (0, 0)] + _pads(a.get("pads"), rank))


def _gemm(a_, b_, c, a):
    if a.get("transA", 0):
        a_ = a_.T
    if a.get("transB", 0):
        b_ = b_.T
    y = a.get("alpha", 1.0) * (a_ @ b_)
    if c is not None:
        y = y + a.get("beta", 1.0) * c
    return y


def _split(x, split, a, num_outputs):
    axis = a.get("axis", 0)
    sizes = list(split) if split is not None else a.get("split")
    if sizes is None:
        sizes = [x.shape[axis] // num_outputs] * num_outputs
    return jnp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis)


def _reshape(x, shape):
    shape = [int(s) for s in np.asarray(shape)]
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return jnp.reshape(x, shape)


def _run_node(node, ins, constants):
    op, a = node.op_type, _attrs(node)
    x = ins[0] if ins else None
    if op == "Constant":
        return [jnp.asarray(numpy_helper.to_array(a["value"]))]
    if op == "Identity":
        return [x]
    if op in ("Add", "Sub", "Mul", "Div", "Pow"):
        fn = {"Add": jnp.add, "Sub": jnp.subtract, "Mul": jnp.multiply, "Div": jnp.divide, "Pow": jnp.power}[op]
        return [fn(ins[0], ins[1])]
    if op == "Relu":
        return [jax.nn.relu(x)]
    if op == "Sqrt":
        return [jnp.sqrt(x)]
    if op == "Erf":
        return [jax.lax.erf(x)]
    if op == "Clip":
        lo = ins[1] if len(ins) > 1 and ins[1] is not None else None
        hi = ins[2] if len(ins) > 2 and ins[2] is not None else None
        return [jnp.clip(x, lo, hi)]
    if op == "Gemm":
        return [_gemm(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)]
    if op == "MatMul":
        return [jnp.matmul(ins[0], ins[1])]
    if op == "Conv":
        return [_conv(x, ins[1], ins[2] if len(ins) > 2 else None, a)]
    if op == "MaxPool":
        return [_max_pool(x, a)]
    if op == "GlobalAveragePool":
        return [jnp.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True)]
    if op == "Flatten":
        axis = a.get("axis", 1)
        return [jnp.reshape(x, (int(np.prod(x.shape[:axis])), -1))]
    if op == "ReduceMean":
        axes = a.get("axes")
        return [jnp.mean(x, axis=tuple(axes) if axes is not None else None, keepdims=bool(a.get("keepdims", 1)))]
    if op == "Reshape":
        return [_reshape(x, constants[node.input[1]])]
    if op == "Transpose":
        return [jnp.transpose(x, a.get("perm"))]
    if op == "Split":
        split = constants.get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
        return _split(x, split, a, len(node.output))
    if op == "Softmax":
        return [jax.nn.softmax(x, axis=a.get("axis", -1))]
    if op == "Where":
        return [jnp.where(ins[0], ins[1], ins[2])]
    raise NotImplementedError(f"ONNX op {op} (node {node.name or node.output[0]}) has no JAX mapping here")


def function_from_onnx(path):
    """f(x) for a model with one input and one output; weights are closed over."""
    model = onnx.load(path)
    graph = model.graph
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    inputs = [i.name for i in graph.input if i.name not in constants]
    if len(inputs) != 1 or len(graph.output) != 1:
        raise NotImplementedError(f"{path}: {len(inputs)} inputs and {len(graph.output)} outputs, expected 1 and 1")
    # Constant nodes feeding shape operands (Reshape's shape, Split's sizes) must stay
    # numpy values, not traced arrays.
    for node in graph.node:
        if node.op_type == "Constant":
            constants[node.output[0]] = numpy_helper.to_array(_attrs(node)["value"])

    def f(x):
        values = {name: jnp.asarray(v) for name, v in constants.items()}
        values[inputs[0]] = x
        for node in graph.node:
            ins = [values[name] if name else None for name in node.input]
            for name, value in zip(node.output, _run_node(node, ins, constants)):
                values[name] = value
        return values[graph.output[0].name]

    return f
