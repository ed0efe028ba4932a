"""What chapter 6 prints from ``clustermath.validation``, pinned: the book prints it, so a changed
word is a changed page.

``DISAGREEMENTS`` holds every field of every entry of ``measurements.disagreements()`` in the
chapter's order: its text as printed, and the two figures as arithmetic on the numbers the
sources print (not read back from the code under test). Used by ``test_mutants_validation.py``.
"""
from __future__ import annotations

from typing import NamedTuple

# Narayanan's 1T model (l = 128, h = 25,600, s = 2,048, V = 51,200): model FLOPs (Korthikanti eq. 7)
# over the FLOPs with the recompute pass (Narayanan eq. 3)
_L, _H, _S, _V = 128, 25_600, 2_048, 51_200
NARAYANAN_MODEL_OVER_HARDWARE = (72 * (1 + _S / (6 * _H) + _V / (12 * _H * _L))
                                 / (96 * (1 + _S / (6 * _H) + _V / (16 * _L * _H))))
# Korthikanti's 22B model (l = 48, h = 6,144, s = 2,048, V = 51,200): (model + 4 B l s² h) / model
_L, _H = 48, 6_144
KORTHIKANTI_22B_ONE_REPEAT = 1 + 4 * _S / (72 * _H * (1 + _S / (6 * _H) + _V / (12 * _H * _L)))


class Pinned(NamedTuple):
    id: str
    kind: str
    sources: tuple[str, ...]
    rows: tuple[str, ...]
    where: str
    claim: str
    stated: float
    recomputed: float
    unit: str
    computation: str
    checks: tuple[tuple[str, str], ...]


DISAGREEMENTS = (
    Pinned('megascale-aggregate-16', 'arithmetic', ('jiang2024megascale',), ('ms24-t2-16',),
           where='Table 2',
           claim='MegaScale, 12,288 GPUs: MFU 55.2%',
           stated=55.2, recomputed=100 * 2166.3 * 1e3 / (12_288 * 312), unit='%',
           computation=(
               'aggregate 2166.3 PFLOP/s / (12,288 GPUs x 312 TFLOP/s) = 56.50%, not 55.2% (the peak 312 '
               "is what the table's other rows imply)"
           ),
           checks=(('mfu_vs_aggregate', 'ms24-t2-16'),)),
    Pinned('megascale-aggregate-01', 'arithmetic', ('jiang2024megascale',), ('ms24-t2-01',),
           where='Table 2',
           claim='Megatron-LM, 256 GPUs: MFU 53%',
           stated=53.0, recomputed=100 * 43.3 * 1e3 / (256 * 312), unit='%',
           computation=(
               'aggregate 43.3 PFLOP/s / (256 GPUs x 312 TFLOP/s) = 54.21%, not 53% (the peak 312 is what '
               "the table's other rows imply)"
           ),
           checks=(('mfu_vs_aggregate', 'ms24-t2-01'),)),
    Pinned('megascale-aggregate-02', 'arithmetic', ('jiang2024megascale',), ('ms24-t2-02',),
           where='Table 2',
           claim='Megatron-LM, 512 GPUs: MFU 49.9%',
           stated=49.9, recomputed=100 * 77.6 * 1e3 / (512 * 312), unit='%',
           computation=(
               'aggregate 77.6 PFLOP/s / (512 GPUs x 312 TFLOP/s) = 48.58%, not 49.9% (the peak 312 is '
               "what the table's other rows imply)"
           ),
           checks=(('mfu_vs_aggregate', 'ms24-t2-02'),)),
    Pinned('megascale-aggregate-04', 'arithmetic', ('jiang2024megascale',), ('ms24-t2-04',),
           where='Table 2',
           claim='Megatron-LM, 1,024 GPUs: MFU 44.7%',
           stated=44.7, recomputed=100 * 131.9 * 1e3 / (1_024 * 312), unit='%',
           computation=(
               'aggregate 131.9 PFLOP/s / (1,024 GPUs x 312 TFLOP/s) = 41.28%, not 44.7% (the peak 312 is '
               "what the table's other rows imply)"
           ),
           checks=(('mfu_vs_aggregate', 'ms24-t2-04'),)),
    Pinned('megascale-aggregate-15', 'rounding', ('jiang2024megascale',), ('ms24-t2-15',),
           where='Table 2',
           claim='MegaScale, 8,192 GPUs: MFU 54.9%',
           stated=54.9, recomputed=100 * 1400.6 * 1e3 / (8_192 * 312), unit='%',
           computation=(
               'aggregate 1400.6 PFLOP/s / (8,192 GPUs x 312 TFLOP/s) = 54.80%, not 54.9% (the peak 312 is'
               " what the table's other rows imply)"
           ),
           checks=(('mfu_vs_aggregate', 'ms24-t2-15'),)),
    Pinned('megascale-tokens-12', 'rounding', ('jiang2024megascale',), ('ms24-t2-12',),
           where='Table 2',
           claim='Megatron-LM, 12,288 GPUs: 1466.8k tokens/s',
           stated=1466.8e3, recomputed=6_144 * 2_048 / 8.57, unit='tokens/s',
           computation=(
               '6,144 x 2,048 tokens / 8.57 s = 1,468,251 tokens/s; no iteration time that rounds to 8.57 '
               's gives the printed throughput'
           ),
           checks=(('tokens_vs_iteration', 'ms24-t2-12'),)),
    Pinned('megascale-tokens-05', 'rounding', ('jiang2024megascale',), ('ms24-t2-05',),
           where='Table 2',
           claim='MegaScale, 256 GPUs: 49.0k tokens/s',
           stated=49.0e3, recomputed=768 * 2_048 / 32, unit='tokens/s',
           computation=(
               '768 x 2,048 tokens / 32 s = 49,152 tokens/s; no iteration time that rounds to 32 s gives '
               'the printed throughput'
           ),
           checks=(('tokens_vs_iteration', 'ms24-t2-05'),)),
    Pinned('megascale-speedup-10', 'rounding', ('jiang2024megascale',), ('ms24-t2-10', 'ms24-t2-14'),
           where='Table 2 (MFU column, speed-up in parentheses)',
           claim='MegaScale over Megatron-LM at 6,144 GPUs: 1.19x',
           stated=1.19, recomputed=57.3 / 47.8, unit='ratio',
           computation=(
               '57.3% / 47.8% = 1.199, which rounds to 1.20; the table prints 1.19 (truncated)'
           ),
           checks=()),
    Pinned('megascale-speedup-11', 'rounding', ('jiang2024megascale',), ('ms24-t2-11', 'ms24-t2-15'),
           where='Table 2 (MFU column, speed-up in parentheses)',
           claim='MegaScale over Megatron-LM at 8,192 GPUs: 1.26x',
           stated=1.26, recomputed=54.9 / 43.3, unit='ratio',
           computation=(
               '54.9% / 43.3% = 1.268, which rounds to 1.27; the table prints 1.26 (truncated)'
           ),
           checks=()),
    Pinned('megascale-fig9-drop', 'arithmetic', ('jiang2024megascale',), ('ms24-f9-1', 'ms24-f9-2', 'ms24-f9-3'),
           where='§6.1 text vs Figure 9 labels',
           claim="'MFU of Megatron-LM decreases by 1.6%' from 2,240 to 11,200 GPUs",
           stated=1.6, recomputed=49.2 - 48.2, unit='%',
           computation=(
               'labels 49.20% -> 48.20%: 1.0 points, 2.0% relative; neither is 1.6'
           ),
           checks=()),
    Pinned('megascale-lamb-bubbles', 'arithmetic', ('jiang2024megascale',), (),
           where='§3.1 (LAMB optimizer)',
           claim="a 4x batch with LAMB 'reduces 87.5% of the pipeline bubbles'",
           stated=87.5, recomputed=100 * (1 - 1 / 4), unit='%',
           computation=(
               'the interleaved bubble of one step lasts (p-1) x t_microbatch / v whatever the number of '
               'micro-batches m; four steps at batch B carry four bubbles, one step at 4B carries one: 1 -'
               ' 1/4 = 75% of the bubble time per token (the bubble fraction (p-1)/(v m) also falls 4x)'
           ),
           checks=()),
    Pinned('llama3-t5-faulty-gpu', 'arithmetic', ('grattafiori2024llama3',), ('llama3-t5-1',),
           where='Table 5',
           claim='Faulty GPU: 148 interruptions = 30.1%',
           stated=30.1, recomputed=100 * 148 / 419, unit='%',
           computation=(
               '148 of the 419 unexpected interruptions = 35.3%, not 30.1%'
           ),
           checks=(('share_vs_count', 'llama3-t5-1'),)),
    Pinned('llama3-t5-sum', 'arithmetic', ('grattafiori2024llama3',), (),
           where='Table 5',
           claim='the percentage column of the 419 unexpected interruptions',
           stated=94.9, recomputed=100.0, unit='%',
           computation=(
               'the printed percentages add up to 94.9%, while the counts add up to all 419 unexpected '
               'interruptions; the 5.2-point gap is the faulty-GPU misprint'
           ),
           checks=()),
    Pinned('llama3-gpu-share', 'arithmetic', ('grattafiori2024llama3',), ('llama3-gpu-share',),
           where='§3.3.4 and Table 5',
           claim="'GPU issues ... accounting for 58.7% of all unexpected issues'",
           stated=58.7, recomputed=100 * (148 + 72 + 19 + 17 + 6 + 6) / 419, unit='%',
           computation=(
               'GPU-category counts 268 / 419 = 64.0%; the printed GPU percentages add up to 58.7%, so '
               '58.7% inherits the 30.1% misprint'
           ),
           checks=()),
    Pinned('llama3-t4-dp', 'arithmetic', ('grattafiori2024llama3',), ('llama3-t4-3',),
           where='Table 4, row 3',
           claim='16,384 GPUs as TP 8 x CP 16 x PP 16 x DP 4, batch 16 per DP group, 131,072-token sequences, 16M tokens',
           stated=4, recomputed=16_384 // (8 * 16 * 16), unit='count',
           computation=(
               '8 x 16 x 16 x 4 = 8,192 GPUs, not 16,384; 16 x 4 x 131,072 = 8,388,608 tokens (8M), not '
               '16M. DP = 16,384 / (8 x 16 x 16) = 8 and DP = 16M / (16 x 131,072) = 8 agree: the printed '
               'DP 4 is the misprint (the CSV row uses DP 8)'
           ),
           checks=()),
    Pinned('llama3-t4-mfu', 'rounding', ('grattafiori2024llama3',), ('llama3-t4-2',),
           where='Table 4, row 2',
           claim='400 TFLOPs/GPU = 41% BF16 MFU',
           stated=41.0, recomputed=100 * 400 / 989, unit='%',
           computation=(
               '400 / 989 TFLOP/s = 40.44%, which rounds to 40%; 41% holds only if the TFLOPs/GPU column '
               'is rounded to tens (>= 405 TFLOP/s gives >= 40.95%). Rows 1 and 3 agree (430 -> 43.5%, 380'
               ' -> 38.4%)'
           ),
           checks=(('mfu_vs_tflops', 'llama3-t4-2'),)),
    Pinned('narayanan-pct-peak-is-hfu', 'metric', ('narayanan2021', 'korthikanti2023'), ('nar21-t1-10', 'kor22-t5-4a'),
           where='Narayanan Table 1 and §5.1 eq. (3); Korthikanti Table 5',
           claim="1T model: '52% of peak' (Narayanan, 3,072 GPUs) vs 56.3% MFU (Korthikanti, 512 GPUs, no DP)",
           stated=52.0, recomputed=100 * 163 / 312 * NARAYANAN_MODEL_OVER_HARDWARE, unit='%',
           computation=(
               "Narayanan's FLOPs count the recompute forward pass (96 vs 72 B s l h^2): model/hardware "
               "FLOPs = 0.7502, so 163 TFLOP/s is 39.2% MFU. Korthikanti's higher MFU comes from selective"
               ' recompute and sequence parallelism, on a smaller run without data parallelism'
           ),
           checks=()),
    Pinned('korthikanti-appc-175', 'arithmetic', ('korthikanti2023',), ('kor22-appc-175', 'kor22-t5-2a'),
           where='Appendix C vs Table 5',
           claim='microbatch-level recompute raises the 175B MFU to 52.3% (+0.7%)',
           stated=0.7, recomputed=52.3 - 51.4, unit='%',
           computation=(
               '52.3% - 51.4% (Table 5) = 0.9 points; the 530B case agrees (56.4 - 56 = 0.4)'
           ),
           checks=()),
    Pinned('korthikanti-sbhp-gib', 'unit', ('korthikanti2023',), ('kor22-sbhp',),
           where='Appendix B',
           claim='sbhp = 2.73 GB',
           stated=2.73, recomputed=2048 * 1 * 20480 * 35 * 2 / 1e9, unit='GB',
           computation=(
               '2048 x 1 x 20480 x 35 x 2 bytes = 2,936,012,800 B = 2.94 GB = 2.73 GiB'
           ),
           checks=()),
    Pinned('korthikanti-eq8-selective', 'metric', ('korthikanti2023',), ('kor22-t5-1a', 'kor22-t5-2a', 'kor22-t5-3a', 'kor22-t5-4a'),
           where="Appendix A, eq. (8), which Table 5's HFU column follows",
           claim='22B model: HFU 43.7% with selective recompute (MFU 41.5%)',
           stated=43.7, recomputed=41.5 * KORTHIKANTI_22B_ONE_REPEAT, unit='%',
           computation=(
               'selective recompute repeats the forward pass of the two attention-score products, Q K^T '
               'and scores x V, 2 B s^2 h FLOPs each per layer: 4 B L s^2 h in all. Eq. (8) writes 72 B L '
               's h^2 (1 + s/(3h) + ...), which adds 12 B L s^2 h, the forward and the backward of those '
               'products, three times the repeated work. Counting the repeat once, the HFU is 41.5% x '
               '1.0173 = 42.2%; the gap shrinks with width (56.5% against 57.0% at 1T)'
           ),
           checks=()),
    Pinned('hpn-checkpoint-overhead', 'arithmetic', ('qian2024hpn',), ('hpn-ckpt-time',),
           where='§2.3, Figure 4',
           claim="checkpoint overhead 'still around 5%' at 100 s every 2-4 hours",
           stated=5.0, recomputed=100 * 100 / (2 * 3600), unit='%',
           computation=(
               '100 s / 2 h = 1.39%, 100 s / 4 h = 0.69%; 5% would need a checkpoint every 33 min'
           ),
           checks=()),
    Pinned('tpuv4-ocs-power', 'cross-source', ('jouppi2023tpuv4', 'google2023tpuv4blog'), ('jouppi23-ocs-power',),
           where="ISCA'23 abstract vs Google Cloud blog",
           claim='OCS and optics share of TPU v4 system power',
           stated=3.0, recomputed=5.0, unit='%',
           computation=(
               "the ISCA paper's abstract says <3% of system power; Google's Cloud blog says <5% (the blog"
               ' read only as quoted in repositories). Both say <5% of system cost'
           ),
           checks=()),
    Pinned('kokolis-series-1024', 'arithmetic', ('kokolis2025',), ('kok25-mttf-1024', 'kok25-rsc1-rate'),
           where='Figure 7 text and the ETTR section (secondary)',
           claim='measured MTTF of 1024-GPU jobs 7.9 h with an RSC-1 rate of 6.50 per 1000 node-days',
           stated=7.9, recomputed=24 / (128 * 6.5 / 1000), unit='h',
           computation=(
               'series model: 24 h / (128 nodes x 0.00650 per node-day) = 28.8 h, 3.7x the measured 7.9 h;'
               ' the 16,384-GPU projection (24 / (2048 x 0.00650) = 1.80 h) does follow the rate. Both '
               'numbers read only in material quoting the paper'
           ),
           checks=()),
    Pinned('kokolis-vs-llama3-16k', 'cross-source', ('kokolis2025', 'grattafiori2024llama3'), ('kok25-mttf-16k', 'llama3-int-unexpected'),
           where='Kokolis §IV (secondary) vs Llama 3 §3.3.4',
           claim='projected MTTF of a 16,384-GPU job from the RSC-1 A100 rate',
           stated=1.8, recomputed=54 * 24 / 419, unit='h',
           computation=(
               'Llama 3 measured 54 days x 24 h / 419 = 3.09 h between unexpected interruptions on 16,384 '
               "H100: 3.79 per 1000 node-days, between RSC-2's 2.34 and RSC-1's 6.50"
           ),
           checks=()),
    Pinned('nccl1455-nvls-5gpu', 'rounding', ('nccl1455',), ('nccl1455-nvls-5',),
           where='issue description, results 2-3',
           claim="NVLS on 5 GPUs: busbw 420 GB/s with algbw 258 GB/s ('about')",
           stated=420.0, recomputed=258 * 2 * (5 - 1) / 5, unit='GB/s',
           computation=(
               'nccl-tests prints busbw = algbw x 2(n-1)/n whatever the algorithm: 258 x 8/5 = 412.8 GB/s,'
               " 1.7% below the reported busbw: the reporter's round figures, not a measurement error"
           ),
           checks=(('busbw_vs_algbw', 'nccl1455-nvls-5'),)),
    Pinned('nccl1455-nvls-8gpu', 'rounding', ('nccl1455',), ('nccl1455-nvls-8',),
           where='issue description, results 2-3',
           claim="NVLS on 8 GPUs: busbw 480 GB/s with algbw 273 GB/s ('about')",
           stated=480.0, recomputed=273 * 2 * (8 - 1) / 8, unit='GB/s',
           computation=(
               'nccl-tests prints busbw = algbw x 2(n-1)/n whatever the algorithm: 273 x 14/8 = 477.8 '
               "GB/s, 0.5% below the reported busbw: the reporter's round figures, not a measurement error"
           ),
           checks=(('busbw_vs_algbw', 'nccl1455-nvls-8'),)),
    Pinned('nccltests175-theoretical', 'cross-source', ('nccltests175', 'nccl1048', 'nccltests119'), ('ncclt175-a100-2node',),
           where='nccl-tests #175 vs the same report in nccl #1048',
           claim='theoretical inter-node all-reduce busbw for 4 x 200 Gbps NICs per node',
           stated=100.0, recomputed=4 * 24.0, unit='GB/s',
           computation=(
               'the reporter wrote 100 GB/s (4 x 25) in nccl-tests #175 and 96 GB/s in nccl #1048; the '
               "NCCL maintainer's rule of thumb is 24 GB/s per 200 Gbps NIC (nccl-tests #119): 4 x 24 = "
               '96. Measured 86 GB/s is 86% or 90% of it'
           ),
           checks=()),
)


MODELS = {
    "throughput": "predict_run",
    "collectives": "ring bus bandwidth: efficiency × link rate",
    "memory": "checkpoint bytes per parameter; recompute time from the FLOP count",
    "failures": "series failure model, and the effective training-time ratio",
    "stragglers": "slowest of N ranks with normal noise",
    "fabric": "chapter 4's scale units; predict_run's gradient bytes",
}
"""``holdout.MODELS``: the model of each family, in words, as the chapter's summary table prints it."""

RESIDUAL_MODELS = {
    "nccl1244-latency": "latency α per log-depth step",
    "nar21-ckpt-size": "checkpoint: 14 bytes per parameter",
    "kor22-t4-1": "layer time scaled by FLOPs", "kor22-t4-2": "layer time scaled by FLOPs",
    "kor22-t4-3": "layer time scaled by FLOPs", "kor22-t4-4": "layer time scaled by FLOPs",
    "kor22-t4-5": "layer time scaled by FLOPs", "kor22-ovh-full-large": "layer time scaled by FLOPs",
    "kor22-ovh-present-large": "layer time scaled by FLOPs",
    "llama3-ett": "effective training-time ratio (Daly)",
}
"""The rows whose residual names a model of its own (the memory rows, the Llama 3 ETTR); the failures
family's other rows name ``series failure model``, every other row its family's model."""

RESIDUALS = {
    # collectives
    'nccl1455-ring-8': ('calibration', 'fitted: bus efficiency up'),
    'nccl1455-nvls-8': ('outside', 'NVLink SHARP reduces inside the switch: bus bandwidth is no wire rate'),
    'nccl1455-nvls-5': ('outside', 'NVLink SHARP reduces inside the switch: bus bandwidth is no wire rate'),
    'ncclt212-nvls-8': ('outside', 'NVLink SHARP reduces inside the switch: bus bandwidth is no wire rate'),
    'ncclt212-ring': ('outside', "a maintainer's statement of the calibration row's figure"),
    'ncclt175-a100-1node': ('validation', 'NVLink, one node'),
    'ncclt175-a100-2node': ('outside', "on two nodes NCCL runs its tree algorithm (the thread's maintainer): "
                                       "outside the ring model"),
    'nccl1221-4node': ('calibration', 'fitted: bus efficiency out'),
    'nccl1222-4node-8g': ('outside', 'no link rate published'),
    'nccl1244-latency': ('calibration', 'fitted: latency α, 8 steps of 16 ranks'),
    'nccl1374-h800-nvls': ('outside', 'NVLink SHARP reduces inside the switch: bus bandwidth is no wire rate'),
    'nccl1031-2node': ('outside', 'NVLink SHARP reduces inside the switch: bus bandwidth is no wire rate'),
    'nccl1031-4node': ('validation', '4 nodes, NIC-bound'),
    # throughput
    'nar21-t1-01': ('calibration', 'fitted: kernel half width'),
    'nar21-t1-02': ('validation', ''),
    'nar21-t1-03': ('validation', ''),
    'nar21-t1-04': ('validation', ''),
    'nar21-t1-05': ('validation', ''),
    'nar21-t1-06': ('validation', ''),
    'nar21-t1-07': ('validation', ''),
    'nar21-t1-08': ('validation', ''),
    'nar21-t1-09': ('validation', ''),
    'nar21-t1-10': ('validation', ''),
    'nar21-t2-01': ('validation', ''),
    'nar21-t2-02': ('validation', ''),
    'nar21-t2-03': ('validation', ''),
    'nar21-t2-04': ('calibration', 'fitted: kernel efficiency'),
    'nar21-t2-05': ('validation', ''),
    'nar21-t2-06': ('validation', ''),
    'kor22-t5-1a': ('validation', ''),
    'kor22-t5-1b': ('validation', ''),
    'kor22-t5-2a': ('validation', ''),
    'kor22-t5-2b': ('validation', ''),
    'kor22-t5-3a': ('validation', ''),
    'kor22-t5-3b': ('validation', ''),
    'kor22-t5-4a': ('validation', ''),
    'kor22-t5-4b': ('validation', ''),
    'kor22-dp8-a': ('validation', ''),
    'kor22-dp8-b': ('validation', ''),
    'kor22-appc-175': ('validation', ''),
    'kor22-appc-530': ('validation', ''),
    'ms24-t2-01': ('validation', ''),
    'ms24-t2-02': ('validation', ''),
    'ms24-t2-03': ('validation', ''),
    'ms24-t2-04': ('validation', ''),
    'ms24-t2-05': ('validation', "MegaScale's own stack"),
    'ms24-t2-06': ('validation', "MegaScale's own stack"),
    'ms24-t2-07': ('validation', "MegaScale's own stack"),
    'ms24-t2-08': ('validation', "MegaScale's own stack"),
    'ms24-t2-09': ('validation', ''),
    'ms24-t2-10': ('validation', ''),
    'ms24-t2-11': ('validation', ''),
    'ms24-t2-12': ('validation', ''),
    'ms24-t2-13': ('validation', "MegaScale's own stack"),
    'ms24-t2-14': ('validation', "MegaScale's own stack"),
    'ms24-t2-15': ('validation', "MegaScale's own stack"),
    'ms24-t2-16': ('validation', "MegaScale's own stack"),
    'ms24-f9-1': ('validation', ''),
    'ms24-f9-2': ('validation', ''),
    'ms24-f9-3': ('validation', ''),
    'ms24-f9-4': ('validation', "MegaScale's own stack"),
    'ms24-f9-5': ('validation', "MegaScale's own stack"),
    'ms24-f9-6': ('validation', "MegaScale's own stack"),
    'ms24-t3-1': ('validation', ''),
    'ms24-t3-2': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-3': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-4': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-5': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-6': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-7': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-8': ('outside', "a software change (MegaScale's Table 3)"),
    'ms24-t3-9': ('outside', "a software change (MegaScale's Table 3)"),
    'llama3-t4-1': ('validation', ''),
    'llama3-t4-2': ('validation', ''),
    'llama3-t4-3': ('validation', ''),
    'nemo24-gpt3-175b-128': ('validation', ''),
    'nemo24-gpt3-175b-512': ('validation', ''),
    'nemo24-llama2-7b-8': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'nemo24-llama2-13b-16': ('validation', ''),
    'nemo24-llama2-70b-64': ('validation', ''),
    'nemo24-nemotron-8b-64': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'nemo24-nemotron-22b-64': ('validation', ''),
    'nemo24-nemotron-340b-128': ('validation', ''),
    'nemo24-llama3-8b-8': ('calibration', 'fitted: cp attention overhead'),
    'nemo24-llama3-70b-64': ('validation', ''),
    'mosaic23-a100-80-70b-s2048-g64': ('validation', ''),
    'mosaic23-a100-80-70b-s2048-g32': ('validation', ''),
    'mosaic23-a100-80-30b-s2048-g8': ('validation', ''),
    'mosaic23-a100-80-13b-s2048-g8': ('validation', ''),
    'mosaic23-a100-80-7b-s2048-g8': ('validation', ''),
    'mosaic23-a100-80-3b-s2048-g8': ('validation', ''),
    'mosaic23-a100-80-1b-s2048-g8': ('validation', ''),
    'mosaic23-a100-80-760m-s2048-g8': ('validation', ''),
    'mosaic23-a100-80-125m-s2048-g8': ('validation', ''),
    'mosaic23-a100-40-70b-s2048-g128': ('validation', ''),
    'mosaic23-a100-40-30b-s2048-g128': ('validation', ''),
    'mosaic23-a100-40-13b-s2048-g128': ('validation', ''),
    'mosaic23-a100-40-7b-s2048-g128': ('validation', ''),
    'mosaic23-a100-40-3b-s2048-g128': ('validation', ''),
    'mosaic23-h100-70b-s2048-g64': ('calibration', 'fitted: hopper kernel efficiency'),
    'mosaic23-h100-13b-s2048-g64': ('validation', ''),
    'mosaic23-h100-7b-s2048-g8': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic23-h100-3b-s8192-g8': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic23-h100fp8-3b-s8192-g8': ('validation', "MFU against the FP8 peak, 1,979 TFLOP/s (llm-foundry's collect_results.py); a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic23-h100-3b-s512-g8': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic23-h100fp8-3b-s512-g8': ('validation', "MFU against the FP8 peak, 1,979 TFLOP/s (llm-foundry's collect_results.py); a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic23-h100-1b-s512-g8': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic23-h100fp8-1b-s512-g8': ('validation', "MFU against the FP8 peak, 1,979 TFLOP/s (llm-foundry's collect_results.py); a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic24-h100-70b-s2048-g512': ('validation', ''),
    'mosaic24-h100-70b-s2048-g128': ('validation', ''),
    'mosaic24-h100-13b-s2048-g512': ('validation', ''),
    'mosaic24-h100-13b-s2048-g128': ('validation', ''),
    'mosaic24-h100-7b-s2048-g512': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic24-h100-7b-s2048-g128': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic24-h100-3b-s2048-g512': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mosaic24-h100-1b-s2048-g512': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mbridge25-h100-llama3-8b': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mbridge25-h100-llama3-70b': ('validation', ''),
    'mbridge25-h100-llama31-405b': ('validation', ''),
    'mbridge25-b200-llama3-8b': ('validation', "a narrow model on H100: its small layers cost more than the roofline's GEMMs and element-wise bytes count"),
    'mbridge25-b200-llama31-405b': ('validation', ''),
    'titan24-t1-8b-compile': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t1-8b-float8': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t2-8b-cp1': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t2-8b-cp2': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t2-8b-cp4': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t2-8b-cp8': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t3-8b-compile': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t3-8b-float8': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t4-70b-2d': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t4-70b-asynctp': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t5-405b-1f1b': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t5-405b-interleaved': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t6-405b-cp1': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t6-405b-cp2': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t6-405b-cp4': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'titan24-t6-405b-cp8': ('validation', 'H100s at a 500 W power limit with HBM2e (the source: peak between SXM and NVL, not known); the model uses the SXM peak'),
    'bloom22-176b': ('validation', ''),
    'mlperf31-eos-gpt3-512': ('validation', ''),
    'mlperf31-eos-gpt3-768': ('validation', ''),
    'mlperf31-eos-gpt3-4096': ('validation', ''),
    'mlperf31-eos-gpt3-6144': ('validation', ''),
    'mlperf31-eos-gpt3-8192': ('validation', ''),
    'mlperf31-eos-gpt3-10240': ('validation', ''),
    'mlperf31-eos-gpt3-10752': ('validation', ''),
    # memory
    'nar21-ckpt-size': ('validation', '16-bit weights and FP32 Adam state; no gradients'),
    'kor22-t4-1': ('calibration', 'the measured reference the others scale'),
    'kor22-t4-2': ('validation', 'no recompute; sequence parallelism adds no FLOPs'),
    'kor22-t4-3': ('validation', 'full recompute'),
    'kor22-t4-4': ('validation', 'selective recompute'),
    'kor22-t4-5': ('validation', 'selective recompute; sequence parallelism adds no FLOPs'),
    'kor22-ovh-full-large': ('validation', "full recompute, the 530B model's layer"),
    'kor22-ovh-present-large': ('validation', "selective recompute, the 530B model's layer"),
    # failures
    'kok25-rsc1-rate': ('calibration', 'the fleet rate every row below uses'),
    'kok25-rsc2-rate': ('validation', "one fleet's rate carried to another"),
    'kok25-mttf-1024': ('validation', '1,024 GPUs, 128 nodes'),
    'kok25-mttf-8': ('validation', '8 GPUs, 1 nodes'),
    'kok25-mttf-16k': ('outside', 'a projection made with this very model'),
    'llama3-int-unexpected': ('validation', "16,384 H100 for 54 days at the A100 fleet's rate"),
    'llama3-ett': ('validation', 'measured figure is a lower bound; save and restart from other rows'),
    # stragglers
    'ms24-evict-gain': ('calibration', 'fitted: straggler spread, at 12,288 GPUs (assumed: the source says more '
                                       'than 10,000)'),
    'lin25-waste-median': ('validation', "every job granted 12,288 GPUs, the model's largest share"),
    'lin25-waste-p90': ('validation', "every job granted 12,288 GPUs, the model's largest share"),
    'lin25-fleet': ('validation', "every job granted 12,288 GPUs, the model's largest share"),
    # fabric
    'hpn-tor-oversub': ('identity', 'design arithmetic: 128 × 200G down over 60 × 400G up'),
    'hpn-segment': ('identity', 'hpn_scale: 8 rails × a 128-port ToR pair'),
    'hpn-pod': ('identity', 'hpn_scale: 15 segments at 15:1'),
    'llama3-pod': ('identity', 'meta_zone: 192 racks × 16 GPUs'),
    'ms24-tor-servers': ('identity', 'megascale_tor_set: 32 × 400G down, each split in two'),
    'hpn-dp-traffic': ('validation', '16-bit gradients of 1/64 of the parameters (eq. 2)'),
}
"""Every residual in ``holdout.residuals()``'s order: id -> (role, note), as the chapter's residual tables
print them."""
