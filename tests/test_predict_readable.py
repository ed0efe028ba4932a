"""``predict_run`` is a predictor a reader can hold in mind (issue 43, item 7).

* every function ``predict_run`` calls, followed through the call tree into the whole package
  (and every method of each record class it reaches), is at most 60 lines long, counted as
  ``inspect`` gives its source: decorators, signature, docstring and body;
* the five input records are frozen and each refuses bad input where it is made, with a
  ``ValueError`` naming the field and its range;
* the keywords a reader types and the records give the same prediction.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import math
import textwrap
import types
from pathlib import Path

import pytest

import clustermath
from clustermath.validation import gpus
from clustermath.validation.inputs import Constants, Hardware, Layout, ModelShape, Stack, check_fit
from clustermath.validation.predict import predict_run, predict_step

LIMIT = 60
"""Lines a function may take, everything included."""


def _resolve(node: ast.expr, namespace: dict) -> object | None:
    """The object a call's target names in ``namespace`` (``f`` or ``module.f``), else None."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, namespace)
        return getattr(owner, node.attr, None) if isinstance(owner, (types.ModuleType, type)) else None
    return None


PACKAGE = str(Path(clustermath.__file__).parent)


def _ours(obj: object) -> bool:
    """A class of the package, or a function whose code is written in it."""
    if isinstance(obj, type):
        return obj.__module__.startswith("clustermath")
    code = getattr(obj, "__code__", None)
    return code is not None and code.co_filename.startswith(PACKAGE)


def _members(cls: type) -> list:
    """Every function a record class defines: methods, class methods, properties, ``__post_init__``."""
    found = []
    for value in vars(cls).values():
        value = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if inspect.isfunction(value):
            found.append(value)
    return found


def call_tree(root) -> dict[str, object]:
    """Every package function reachable from ``root`` by name, with every method of each class reached."""
    seen: dict[str, object] = {}
    todo = [root]
    while todo:
        func = inspect.unwrap(todo.pop())
        name = f"{func.__module__}.{func.__qualname__}"
        if name in seen or not _ours(func):  # e.g. what ``dataclass`` writes (no source) or NamedTuple's own
            continue
        seen[name] = func
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            target = _resolve(node.func, func.__globals__)
            target = getattr(target, "__func__", target)   # a class method, bound to its class
            if isinstance(target, type) and _ours(target):
                todo.extend(_members(target))
            elif callable(target) and inspect.isfunction(inspect.unwrap(target)) and _ours(inspect.unwrap(target)):
                todo.append(target)
    return seen


def test_the_call_tree_reaches_every_part_and_record():
    tree = call_tree(predict_run)
    names = {n.rsplit(".", 1)[-1] for n in tree}
    for part in ("predict_step", "predicted_flops", "gemm_times", "memory_time", "wire_rates", "transfers",
                 "stage_time", "fsdp_exposed", "gradient_exposed", "check_fit", "kernel_layer_times", "gemm_time",
                 "collective_time", "hidden_behind", "bubble_time", "straggler_time", "_kernel_share",
                 "_output_layer_time", "_loss_time",
                 "__post_init__", "_checked", "of", "efficiency"):
        assert part in names, part
    assert len(tree) > 40


def test_no_function_predict_run_reaches_is_over_60_lines():
    lengths = {name: len(inspect.getsourcelines(f)[0]) for name, f in call_tree(predict_run).items()}
    over = {name: n for name, n in lengths.items() if n > LIMIT}
    assert not over, over
    assert lengths["clustermath.validation.predict.predict_run"] <= LIMIT


def test_the_measure_sees_a_long_function():
    source = "def long():\n" + "    x = 1\n" * LIMIT
    namespace: dict = {}
    exec(compile(source, "<long>", "exec"), namespace)
    assert len(source.splitlines()) == LIMIT + 1 > LIMIT


# -- the records ---------------------------------------------------------------------------------------

SHAPE = dict(layers=80, hidden=8192, seq_len=4096, vocab=128_256, ffn_hidden=28_672, heads=64, kv_heads=8)
LAYOUT = dict(gpus=64, tp=8, pp=4, global_batch=128, microbatch=1, cp=1, virtual_stages=5, recompute="none")
WIRES = dict(peak_tflops=989.0, scale_up_GBps=450.0, scale_out_GBps=50.0)


def test_records_are_frozen():
    records = (ModelShape(**SHAPE), Layout(**LAYOUT), Hardware(**WIRES), Stack(), Constants())
    for record in records:
        assert dataclasses.is_dataclass(record)
        name = dataclasses.fields(record)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, name, getattr(record, name))


def test_records_normalise_what_they_are_given():
    shape = ModelShape(**{**SHAPE, "layers": 80.0})
    assert shape.layers == 80 and isinstance(shape.layers, int)
    assert shape.kv_share == 8 / 64 and shape.mlp == 28_672
    assert ModelShape(4, 512, 128, 0).mlp == 2048 and ModelShape(4, 512, 128, 0).head_count == 4.0
    assert Stack(flash_attention="yes", sequence_parallel="no") == Stack(flash_attention=True, sequence_parallel=False)
    layout = Layout(**LAYOUT)
    assert (layout.dp, layout.microbatches) == (2, 64)
    assert Hardware(**WIRES).memory_TBps == 3.35 and Hardware(**{**WIRES, "peak_tflops": 312}).memory_TBps == 2.0
    assert Constants().efficiency(Hardware(**WIRES)) == Constants().hopper_kernel_efficiency


@pytest.mark.parametrize("make, change, message", [
    (ModelShape, {"layers": 0}, "layers must be a whole number in 1..inf"),
    (ModelShape, {"hidden": 1.5}, "hidden must be a whole number in 1..inf"),
    (ModelShape, {"seq_len": -4}, "seq_len must be a whole number in 1..inf"),
    (ModelShape, {"vocab": -1}, "vocab must be a whole number in 0..inf"),
    (ModelShape, {"ffn_hidden": 0}, "ffn_hidden must be a whole number in 1..inf"),
    (ModelShape, {"heads": 0}, "heads must be a whole number in 1..inf"),
    (ModelShape, {"heads": 7}, "heads must divide hidden = 8,192, got 7"),
    (ModelShape, {"kv_heads": 65}, "kv_heads must be a whole number in 1..64"),
    (ModelShape, {"kv_heads": 3}, "kv_heads must divide heads = 64, got 3"),
    (ModelShape, {"heads": None}, "kv_heads must be None when heads is None"),
    (Layout, {"gpus": 0}, "gpus must be a whole number in 1..inf"),
    (Layout, {"tp": 70_000}, "tp must be a whole number in 1..65,535"),
    (Layout, {"pp": 0}, "pp must be a whole number in 1..65,535"),
    (Layout, {"cp": 0}, "cp must be a whole number in 1..65,535"),
    (Layout, {"virtual_stages": 0}, "virtual_stages must be a whole number in 1..inf"),
    (Layout, {"global_batch": 0}, "global_batch must be a whole number in 1..inf"),
    (Layout, {"microbatch": 0}, "microbatch must be a whole number in 1..inf"),
    (Layout, {"recompute": "some"}, "recompute must be one of ['none', 'selective', 'full']"),
    (Layout, {"gpus": 65}, "gpus must be a multiple of tp·pp·cp = 32, got 65"),
    (Layout, {"gpus": 32 * 70_000, "global_batch": 70_000}, "gpus must keep the data-parallel group"),
    (Layout, {"global_batch": 127}, "global_batch must be a multiple of microbatch·dp = 2 sequences"),
    (Layout, {"pp": 1, "gpus": 16}, "virtual_stages must be 1 when pp = 1"),
    (Layout, {"global_batch": 2 * 14_000}, "virtual_stages must keep virtual_stages·microbatches within 1..65,535"),
    (Hardware, {"peak_tflops": 0}, "peak_tflops must be a number in (0, inf) TFLOP/s"),
    (Hardware, {"peak_tflops": math.inf}, "peak_tflops must be a number in (0, inf) TFLOP/s"),
    (Hardware, {"scale_up_GBps": 0}, "scale_up_GBps must be a number in (0, inf] GB/s"),
    (Hardware, {"scale_out_GBps": -1}, "scale_out_GBps must be a number in (0, inf] GB/s"),
    (Hardware, {"scale_up_gpus": 0}, "scale_up_gpus must be a whole number in 1..inf"),
    (Hardware, {"memory_TBps": 0}, "memory_TBps must be a number in (0, inf] TB/s"),
    (Hardware, {"gpu": "H100"}, "gpu must be a Gpu record or None"),
    (Stack, {"precision": "fp4"}, "precision must be one of ['bf16', 'fp16', 'fp8'], got 'fp4'"),
    (Stack, {"sharding": "zero2"}, "sharding must be one of ['none', 'optimizer', 'full']"),
    (Stack, {"overlap": 2}, "overlap must be True or False"),
    (Stack, {"flash_attention": "maybe"}, "flash_attention must be True or False"),
    (Stack, {"gated_mlp": None}, "gated_mlp must be True or False"),
    (Stack, {"sequence_parallel": 3}, "sequence_parallel must be True or False"),
    (Constants, {"kernel_efficiency": 0}, "kernel_efficiency must be a number in (0, 1]"),
    (Constants, {"hopper_kernel_efficiency": 1.2}, "hopper_kernel_efficiency must be a number in (0, 1]"),
    (Constants, {"kernel_half_width": -1}, "kernel_half_width must be a number in [0, inf)"),
    (Constants, {"bus_efficiency_up": 1.01}, "bus_efficiency_up must be a number in (0, 1]"),
    (Constants, {"bus_efficiency_out": 0}, "bus_efficiency_out must be a number in (0, 1]"),
    (Constants, {"latency_s": -1e-6}, "latency_s must be a number in [0, inf) s"),
    (Constants, {"fp8_efficiency": 0}, "fp8_efficiency must be a number in (0, 1]"),
    (Constants, {"overlap_slowdown": 1.5}, "overlap_slowdown must be a number in [0, 1]"),
    (Constants, {"tp_overlap": -0.1}, "tp_overlap must be a number in [0, 1]"),
    (Constants, {"pp_overlap": 2}, "pp_overlap must be a number in [0, 1]"),
    (Constants, {"dp_overlap": math.nan}, "dp_overlap must be a number in [0, 1]"),
    (Constants, {"straggler_cv": -0.1}, "straggler_cv must be a number in [0, inf)"),
    (Constants, {"grad_bytes": 0}, "grad_bytes must be a number in (0, inf) bytes"),
    (Constants, {"causal_attention": "yes"}, "causal_attention must be True or False"),
    (Constants, {"kernels": 2}, "kernels must be True or False"),
])
def test_each_record_refuses_bad_input_where_it_is_made(make, change, message):
    base = {ModelShape: SHAPE, Layout: LAYOUT, Hardware: WIRES, Stack: {}, Constants: {}}[make]
    with pytest.raises(ValueError) as err:
        make(**{**base, **change})
    assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize("shape, layout, constants, message", [
    ({"layers": 3}, {}, {}, "layers must be at least pp = 4 (a layer per stage), got 3"),
    ({"layers": 17}, {}, {}, "virtual_stages·pp must be at most layers + 2 = 19 (a chunk per layer, the "
                             "embedding and the loss), got virtual_stages = 5 with pp = 4 (20)"),
    ({"seq_len": 4095}, {"cp": 2, "gpus": 128}, {}, "seq_len must be a multiple of cp = 2 tokens, got 4095"),
    ({"heads": 4, "kv_heads": None}, {}, {}, "heads must divide hidden = 8,192 and be a multiple of tp = 8, got 4"),
    ({}, {}, {"kernels": True}, "gpu must name a GPU with a kernel table when kernels is True, got None"),
])
def test_what_needs_two_records_is_checked_where_they_meet(shape, layout, constants, message):
    with pytest.raises(ValueError) as err:
        check_fit(ModelShape(**{**SHAPE, **shape}), Layout(**{**LAYOUT, **layout}), Hardware(**WIRES),
                  Constants(**constants))
    assert str(err.value).startswith(message), str(err.value)
    no_heads = {k: v for k, v in SHAPE.items() if k not in ("heads", "kv_heads")}
    with pytest.raises(ValueError, match="^heads must be given when kernels is True"):
        check_fit(ModelShape(**no_heads), Layout(**LAYOUT), Hardware.of("H100", scale_out_GBps=50.0),
                  Constants(kernels=True))


def test_fp8_on_a_gpu_without_it_is_refused_by_name_and_taken_at_its_word_by_numbers():
    run = dict(**SHAPE, **LAYOUT, scale_out_GBps=25.0, precision="fp8")
    for part in ("A100", "A100-40GB"):
        with pytest.raises(ValueError, match="^precision must not be 'fp8' on A100-SXM4-"):
            predict_run(**run, gpu=part)
    assert predict_run(**{**run, "precision": "bf16"}, gpu="A100").step_s > 0     # 16 bits: fine
    assert predict_run(**run, peak_tflops=312.0, scale_up_GBps=300.0).step_s > 0  # no record: no way to know
    assert predict_run(**run, gpu="H100").step_s > 0


def test_keywords_and_records_give_the_same_prediction():
    by_hand = predict_run(**SHAPE, **LAYOUT, **WIRES, precision="fp8", flash_attention=True, gated_mlp=True,
                          overlap=True, sharding="optimizer", kernel_efficiency=0.6)
    by_record = predict_step(ModelShape(**SHAPE), Layout(**LAYOUT), Hardware(**WIRES),
                        Stack(precision="fp8", sharding="optimizer", overlap=True, flash_attention=True,
                              gated_mlp=True), Constants(kernel_efficiency=0.6))
    assert by_hand == by_record


def test_hardware_by_name_equals_the_same_gpu_by_numbers():
    h100 = gpus.gpu("H100")
    named = Hardware.of("H100", scale_out_GBps=50.0)
    assert named == Hardware(h100.bf16_tflops, h100.scale_up_GBps, 50.0, h100.scale_up_gpus, h100.memory_TBps, h100)
    assert Hardware.of("H100", scale_out_GBps=50.0, peak_tflops=500.0).peak_tflops == 500.0   # a number given wins
    assert Hardware.of(None, peak_tflops=312.0, scale_up_GBps=300.0, scale_out_GBps=25.0).scale_up_gpus == 8
    with pytest.raises(ValueError, match="^name must name one of the parts"):
        Hardware.of("H100 PCIe", scale_out_GBps=25.0)


def test_every_record_is_exported_by_the_package():
    for name in ("ModelShape", "Layout", "Hardware", "Stack", "Constants", "predict_step", "check_fit"):
        assert getattr(clustermath, name) is not None


def test_a_default_taken_as_checked_is_the_default_checked():
    # a field holding its default object skips its check; an equal value typed afresh is checked, same result
    defaults = {f.name: getattr(Constants(), f.name) for f in dataclasses.fields(Constants)}
    fresh = Constants(**{k: float(str(x)) if isinstance(x, float) else x for k, x in defaults.items()})
    assert fresh == Constants() and Constants().grad_bytes == 4.0 and isinstance(Constants().grad_bytes, float)
    assert Stack(str("bf16"[:2] + "16")) == Stack()
    with pytest.raises(ValueError, match="^kernel_efficiency must be a number in"):
        Constants(kernel_efficiency=float("nan"))


RUN_BY_HAND = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, seq_len=8192, vocab=128256,
                   global_batch=128, microbatch=1, gpus=8, tp=1, pp=1, scale_out_GBps=50.0, gated_mlp=True,
                   flash_attention=True, overlap=True)


@pytest.mark.parametrize(("typed", "canonical"), [
    ({"gpu": "h100 sxm", "precision": "FP8", "sharding": "Optimizer", "recompute": " NONE "},
     {"gpu": "H100-SXM5-80GB", "precision": "fp8", "sharding": "optimizer", "recompute": "none"}),
    ({"gpu": "H100", "sharding": "FSDP", "overlap": "yes", "recompute": "Full"},
     {"gpu": "H100-SXM5-80GB", "sharding": "full", "overlap": True, "recompute": "full"}),
    ({"gpu": "b200", "sharding": "zero-1", "gated_mlp": "True", "flash_attention": "on"},
     {"gpu": "B200-SXM-180GB", "sharding": "optimizer", "gated_mlp": True, "flash_attention": True}),
    ({"gpu": "a100", "sharding": "DDP", "overlap": "off", "precision": "BF16"},
     {"gpu": "A100-SXM4-80GB", "sharding": "none", "overlap": False, "precision": "bf16"}),
    ({"gpu": "DGX-H100", "precision": "FP8-CS", "sharding": "distributed-optimizer"},
     {"gpu": "H100-SXM5-80GB", "precision": "fp8", "sharding": "optimizer"}),
    ({"gpu": "NVIDIA H100 80GB HBM3", "precision": "amp_bf16", "sharding": "FSDP2", "recompute": "uniform"},
     {"gpu": "H100-SXM5-80GB", "precision": "bf16", "sharding": "full", "recompute": "full"}),
    ({"gpu": "DGX-GB200", "precision": "MXFP8"}, {"gpu": "GB200-NVL72", "precision": "fp8"}),
    ({"gpu": "HGX B200", "precision": "float8", "recompute": "core_attn"},
     {"gpu": "B200-SXM-180GB", "precision": "fp8", "recompute": "selective"}),
    ({"gpu": "NVIDIA A100-SXM4-40GB", "precision": "bfloat16", "sharding": "ZeRO-3"},
     {"gpu": "A100-SXM4-40GB", "precision": "bf16", "sharding": "full"}),
])
def test_a_run_typed_by_hand_in_other_spellings_is_the_same_run(typed, canonical):
    assert predict_run(**{**RUN_BY_HAND, **typed}) == predict_run(**{**RUN_BY_HAND, **canonical})


@pytest.mark.parametrize(("switch", "value"), [("precision", "fp4"), ("precision", "nvfp4"), ("sharding", "zero2"),
                                               ("recompute", "some"), ("overlap", "maybe"), ("gated_mlp", "2"),
                                               ("gpu", "H800"), ("gpu", "H100 PCIe"), ("gpu", "GB300"), ("gpu", "DGX")])
def test_a_switch_outside_its_choices_is_still_refused_by_name(switch, value):
    with pytest.raises(ValueError, match=f"^{'name' if switch == 'gpu' else switch} must"):
        predict_run(**{**RUN_BY_HAND, "gpu": "H100", switch: value})


@pytest.mark.parametrize("layers", [18, 84])
def test_chunks_may_hold_the_embedding_and_the_loss_and_uneven_layer_counts(layers):
    """At ``v·p = l + 2`` exactly (18 layers, 5 chunks on each of 4 stages: every chunk a layer, the embedding
    and the loss one each) and with chunks of unequal size (84 layers: 21 a stage, 5 chunks), the layout fits."""
    check_fit(ModelShape(**{**SHAPE, "layers": layers}), Layout(**LAYOUT), Hardware(**WIRES), Constants())
