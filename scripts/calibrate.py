#!/usr/bin/env python3
"""Calibrates oomfix's memory estimate (SPEC §12) on public data points.

Reads data/arch-memory.tsv (what each arch holds in GPU memory) and data/fit-points.tsv (reported
runs: arch, settings, card, fits or OOM, the peak when reported), fits one activation coefficient
per arch family, and writes

  src/core/estimate_table.h   the tables the program compiles in
  tests/estimate/points.tsv   every point as settings the estimator reads, with this model's
                              prediction (tests/estimate checks the C code gives the same)

then prints each point's residual and a summary per family.

  scripts/calibrate.py            write both files
  scripts/calibrate.py --check    write nothing; exit 1 when either file differs from what the
                                  data gives (the table and the data disagree)

Left out of the calibration, and said so per point: regressions (a run that worked on an older
commit of the trainer), host-RAM kills and Windows shared-memory spills (not VRAM points), block
swapping and layer offloading of other trainers (not modelled), full fine-tunes, and points whose
settings are not known well enough to estimate.

Python standard library only. The model below is the one in src/core/estimate.c; change both.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 1073741824.0

# Constants of the model that no point calibrates (the same in src/core/estimate.c).
CONTEXT_GIB = 0.45     # the CUDA context and cuBLAS workspace
KEPT_BF16 = 0.02       # share of weights a quantizer leaves in bf16
BLOCK_SHARE = 0.03     # one transformer block, quantized on the GPU
LORA_PER_RANK = 1.4    # LoRA parameters per rank per (params / hidden)

# Priors for the parts no point measures (GiB per output or input pixel); said "rough" in output.
IMAGE_DEC, IMAGE_ENC = 2.4e-6, 1.2e-6
VIDEO_DEC, VIDEO_ENC = 2.0e-7, 1.0e-7
SAMP_BLOCK = 0.5       # a sampling forward's working set per token, as a share of one block's
                       # saved tensors (no gradients: one block is live at a time)
VIDEO_FAMILIES = {"wan", "ltx"}

# Bands of the phases no measured point scores: the loader's arithmetic (weights), and the rough
# parts (sampling, caching). Fractions of the phase.
LOAD_BAND = (0.04, 0.04)
ROUGH_BAND = (0.25, 0.35)
COVER = 0.8            # the share of measured peaks a band is set to hold
FAMILY_MIN = 8         # residuals (from two sources or more) that give a family its own band

# What PyTorch reports for cards sold by these sizes (GiB); as estimate.c's card_table.
CARD_TABLE = {6: 5.79, 8: 7.63, 10: 9.77, 11: 10.75, 12: 11.76, 16: 15.70, 20: 19.70, 24: 23.99,
              32: 31.36, 40: 39.39, 48: 47.53, 80: 79.10, 94: 93.10, 96: 94.97, 141: 139.72,
              180: 178.35}


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def qtype_bpp(q):
    s = (q or "").split("|")[0].lower()
    if s == "uint8":
        return 2.0
    m = re.fullmatch(r"(?:uint|convrotint)([1-7])", s)
    if m:
        return int(m.group(1)) / 8 + 3 / 64
    if s in ("qfloat8", "float8", "int8", "qint8", "convrot8", "fp8"):
        return 1.0
    if s in ("nvfp4", "convrot4", "qint4", "nf4"):
        return 0.5625
    if s in ("qint2", "int2"):
        return 2 / 8 + 3 / 64
    if s == "convrotbitnet":
        return 0.25
    if s in ("bf16", "fp16", "none", ""):
        return 2.0
    return 1.0


def qbytes(params_b, bpp):
    return params_b * 1e9 * (bpp + KEPT_BF16 * (2.0 - bpp)) / GIB


def opt_bytes(o):
    s = (o or "").lower()
    if "8bit" in s:
        return 2.0
    if "adafactor" in s:
        return 1.0
    if "prodigy" in s:
        return 16.0
    if "lion" in s:
        return 4.0
    if "automagic" in s:
        return 2.0
    return 8.0


def adapter_params(p, a):
    """The adapter's parameters: on every linear layer of the blocks (AI Toolkit's default), or
    on the attention's four projections only (q, k, v, out: network_kwargs.only_if_contains, and
    other trainers' default)."""
    if p["adapter_attn"]:
        return p["rank"] * a["blocks"] * 4 * 2 * a["hidden"] * a["experts"]
    return p["rank"] * LORA_PER_RANK * a["tr_b"] * 1e9 / a["hidden"] * a["experts"]


def adapter_bytes(p):
    """Bytes per adapter parameter: (weight, gradient, optimizer state). AI Toolkit keeps the
    adapter in fp32 (BaseSDTrainProcess.py: network.force_to(..., float32)); a bf16 adapter
    keeps its gradient and a full-width optimizer's state in bf16 too."""
    ob = opt_bytes(p["optimizer"])
    if p["adapter_bf16"]:
        return 2.0, 2.0, ob / 2 if ob >= 4 else ob
    return 4.0, 4.0, ob


def tokens(a, w, h, frames, control=False):
    """Latent tokens of one sample: w x h pixels, `frames` frames (1 for an image); a control
    image joins the sequence (x 2) where the row does not count it already."""
    lf = math.floor((frames - 1) / a["frame_div"]) + 1 if frames > 1 else 1
    mult = max(a["tok_mult"], 2.0) if control else a["tok_mult"]
    return (w / a["tok_px"]) * (h / a["tok_px"]) * mult * lf


def activations(a, res, frames, batch, gc, control=False):
    """What one training step keeps for backward (GiB), as data/activations-sim.tsv counts it:
    per latent token and per text token, with or without gradient checkpointing."""
    ti, tt = tokens(a, res, res, frames, control), a["txt_tok"]
    if gc:
        return batch * (a["ck_img"] * ti + a["ck_txt"] * tt)
    return batch * (a["sv_img"] * ti + a["sv_txt"] * tt)


PHASES = ("model_load", "caching", "baseline_sample", "training", "sampling")


def estimate(p, a, K=None):
    """Each phase of settings p (an est_input as a dict) on arch row a, as parts: for each phase
    (base, act) in GiB before the calibrated constants, so that the phase is
    K["tot"] * (base + K["act"] * act) + CONTEXT_GIB. Mirrors estimate_input() in estimate.c.
    With K, the phases in GiB (and "_terms" per phase) instead."""
    low = p["low_vram"]
    tr_bf16 = a["tr_b"] * 1e9 * 2 / GIB
    tq = qbytes(a["tr_b"], qtype_bpp(p["qtype"])) if p["quantize"] else tr_bf16
    te_quant = p["quantize"] if a["te_flag_quantize"] else p["quantize_te"]
    te_qtype = p["qtype_te"] if a["te_qtype_te"] else p["qtype"]
    te_bf16 = a["te_b"] * 1e9 * 2 / GIB
    eq = qbytes(a["te_b"], qtype_bpp(te_qtype)) if te_quant else te_bf16
    aux = a["aux_b"] * 1e9 * 2 / GIB
    tr_share = te_share = 1.0
    if p["offload"]:
        tr_share = max(1.0 - p["offload_tr"], 0.05)
        te_share = max(1.0 - p["offload_te"], 0.05)
    experts_train = 1 if (low and a["one_expert"]) else a["experts"]
    te_gpu = p["te_gpu"]
    res, batch = p["res"], p["batch"]
    frames = p["frames"] if a["family"] in VIDEO_FAMILIES else 1
    video = a["family"] in VIDEO_FAMILIES
    enc, dec = (VIDEO_ENC, VIDEO_DEC) if video else (IMAGE_ENC, IMAGE_DEC)
    if p["rank"] > 0:
        lora_p = adapter_params(p, a)
        wb, gb, ob = adapter_bytes(p)
        lora_w = lora_p * wb / GIB
        lora_state = lora_p * (gb + ob) / GIB
        lora_opt = lora_p * ob / GIB
    else:
        lora_p = a["tr_b"] * 1e9
        lora_w = 0.0
        lora_state = lora_p * (2.0 + opt_bytes(p["optimizer"])) / GIB
        lora_opt = lora_p * opt_bytes(p["optimizer"]) / GIB
    pixels = res * res * frames
    parts, terms = {}, {}
    # Training: the weights kept, the adapter with its state, what the step keeps for backward.
    w_train = tq * tr_share * experts_train
    e_train = (eq * te_share if te_gpu else 0) + aux
    act = activations(a, res, frames, batch, p["gc"], p["control"])
    vae_train = 0 if p["cache_latents"] else batch * pixels * enc
    parts["training"] = (w_train + e_train + lora_w + lora_state + vae_train, act, p["gc"],
                         w_train + e_train, True)
    terms["training"] = [w_train, e_train, lora_w + lora_state, act, vae_train]
    # Model load: the loader's worst moment (memory-reference §4).
    if p["quantize"]:
        on_gpu = a["load_tr"] == "gpu" or (a["load_tr"] == "gpu_unless_low_vram" and not low)
        step_tr = tr_bf16 + tq * (a["experts"] - 1) if on_gpu else tr_bf16 * BLOCK_SHARE
        # An accuracy-recovery or assistant adapter on a two-expert model quantized on the
        # GPU: both experts are built in bf16 before either is quantized (wan22_14b_model.py);
        # low_vram keeps them on the CPU.
        if ("|" in p["qtype"] or p["assistant"]) and a["experts"] > 1 and on_gpu:
            step_tr = max(step_tr, tr_bf16 * a["experts"])
    else:
        step_tr = 0 if (low and a["park"]) else tr_bf16 * a["experts"]
    if a["tr_with_te"] == "te_first" and not low:
        step_tr += eq * te_share
    tr_during_te = a["tr_with_te"] == "yes" or (a["tr_with_te"] == "unless_low_vram" and not low)
    if a["load_te"] == "gpu_bf16":
        te_step = te_bf16
    else:
        te_step = 0 if (te_quant or low) else te_bf16
    step_te = (tq * tr_share * a["experts"] if tr_during_te else 0) + te_step * te_share
    resident_tr = 0 if (low and a["park"]) else tq * tr_share * experts_train
    resident = resident_tr + eq * te_share
    load = max(step_tr, step_te, resident)
    parts["model_load"] = (load + aux, 0.0, True, load + aux)
    terms["model_load"] = [load, aux, 0, 0, 0]  # the loader's moment: weights and encoders
    # Caching: the VAE encoding the largest bucket beside what the load left; only when the
    # latents or the text embeddings are cached.
    if p["cache_latents"] or not te_gpu:
        parts["caching"] = (resident + aux + pixels * enc, 0.0, True, resident + aux)
        terms["caching"] = [resident_tr, eq * te_share + aux, 0, 0, pixels * enc]
    # Sampling: one sample (x 2 with guidance) and its VAE decode; the baseline sample before
    # step 1 has no optimizer state yet.
    if p["sampling"]:
        sw, sh, sf = p["sample_w"], p["sample_h"], p["sample_frames"] if video else 1
        cfg = 2.0 if (a["cfg"] and p["guidance"]) else 1.0
        s_ti = tokens(a, sw, sh, sf, p["control"])
        s_act = cfg * (a["bl_img"] * s_ti + a["bl_txt"] * a["txt_tok"]) * SAMP_BLOCK
        experts_sample = 1 if (low and a["one_expert"]) else a["experts"]
        s_w = tq * tr_share * experts_sample
        s_e = (eq * te_share if te_gpu else 0) + aux
        decode = sw * sh * sf * dec
        for ph, state in (("sampling", lora_w + lora_opt),
                          ("baseline_sample", lora_w)):
            if ph == "baseline_sample" and not p["baseline"]:
                continue
            if low and a["park"]:
                denoise = s_w + s_e + state + s_act
                vae_only = aux + state + decode
                if vae_only > denoise:
                    parts[ph] = (vae_only, 0.0, True, aux + state)
                    terms[ph] = [0, aux, state, 0, decode]
                    continue
                parts[ph] = (denoise, 0.0, True, s_w + s_e + state)
                terms[ph] = [s_w, s_e, state, s_act, 0]
            else:
                parts[ph] = (s_w + s_e + state + s_act + decode, 0.0, True, s_w + s_e + state)
                terms[ph] = [s_w, s_e, state, s_act, decode]
    if K is None:
        return parts
    out = {}
    for ph, part in parts.items():
        out[ph] = value(part, K)
    out["_terms"] = terms
    return out


# ---- the arch table -----------------------------------------------------------------------------

# The row of arch-memory.tsv that each architecture of activations-sim.tsv is, in dimensions.
SIM_OWN = {"flux": ("flux", "-"), "flux2": ("flux2", "-"), "chroma": ("chroma", "-"),
           "qwen_image": ("qwen_image", "-"), "wan21_14b": ("wan21", "-"),
           "wan21_1.3b": ("wan21", "1.3b"), "wan22_5b": ("wan22_5b", "-"), "zimage": ("zimage", "-"),
           "sd35": ("sd3", "-"), "krea2": ("krea2", "-"), "sdxl": ("sdxl", "-"), "sd15": ("sd1", "-")}
# The text tokens activations.py fed each (peaks.py's *_inputs).
SIM_TXT = {"flux": 512, "flux2": 512, "chroma": 512, "qwen_image": 256, "wan21_14b": 512,
           "wan21_1.3b": 512, "wan22_5b": 512, "zimage": 512, "sd35": 333, "krea2": 256,
           "sdxl": 77, "sd15": 77}


def lsq2(X, y):
    """y ~ c0 x0 + c1 x1, least squares on the relative error."""
    a00 = a01 = a11 = b0 = b1 = 0.0
    for (x0, x1), v in zip(X, y):
        w = 1.0 / (v * v)
        a00 += w * x0 * x0
        a01 += w * x0 * x1
        a11 += w * x1 * x1
        b0 += w * x0 * v
        b1 += w * x1 * v
    det = a00 * a11 - a01 * a01
    return (b0 * a11 - b1 * a01) / det, (a00 * b1 - a01 * b0) / det


def load_sim():
    """activations-sim.tsv's rows, and per architecture the GiB per latent and per text token
    kept without checkpointing (sv), with it (ck), and by the largest block (bl)."""
    rows = read_tsv(os.path.join(ROOT, "data", "activations-sim.tsv"))
    coef = {}
    for key in SIM_OWN:
        rs = [r for r in rows if r["arch"] == key]
        if not rs:
            continue
        coef[key] = {}
        for col, name in (("saved_gib", "sv"), ("ckpt_gib", "ck"), ("largest_block_gib", "bl")):
            X, y = [], []
            for r in rs:
                X.append((int(r["batch"]) * r_tokens(key, r), int(r["batch"]) * SIM_TXT[key]))
                y.append(max(float(r[col]), 1e-4))
            c0, c1 = lsq2(X, y)
            coef[key][name + "_img"], coef[key][name + "_txt"] = max(c0, 0.0), max(c1, 0.0)
    return rows, coef


def r_tokens(key, r):
    """A sim row's latent tokens, as activations.py's inputs make them."""
    px = {"wan22_5b": 32, "sdxl": 8, "sd15": 8}.get(key, 16)
    f = int(r["frames"])
    return (int(r["height"]) // px) * (int(r["width"]) // px) * ((f - 1) // 4 + 1)


def load_archs():
    rows = read_tsv(os.path.join(ROOT, "data", "arch-memory.tsv"))
    archs = []
    for r in rows:
        flag, key = r["te_key"].split("/")
        archs.append({
            "arch": r["arch"], "variant": r["variant"], "family": r["family"],
            "tr_b": float(r["tr_b"]), "hidden": float(r["hidden"]), "experts": int(r["experts"]),
            "te_b": float(r["te_b"]), "aux_b": float(r["aux_b"]), "load_tr": r["load_tr"],
            "load_te": r["load_te"], "tr_with_te": r["tr_with_te"], "park": r["park"] == "yes",
            "one_expert": r["low_vram_train"] == "one_expert",
            "te_flag_quantize": flag == "quantize", "te_qtype_te": key == "qtype_te",
            "tok_px": float(r["tok_px"]), "tok_mult": float(r["tok_mult"]),
            "frame_div": float(r["frame_div"]), "cfg": r["cfg"] == "yes",
            "nominal": r["params"] == "nominal", "blocks": int(r["blocks"]),
            "mlp": float(r["mlp"]), "txt_tok": float(r["txt_tok"]), "sim": r["sim"],
        })
    _, coef = load_sim()
    by_key = {(a["arch"], a["variant"]): a for a in archs}
    for a in archs:
        own = by_key[SIM_OWN[a["sim"]]]
        c = coef[a["sim"]]
        # Counted: the row is the counted model in dimensions; else the sibling's per-block form
        # at this row's own blocks and widths.
        a["counted"] = (a["blocks"], a["hidden"], a["mlp"]) == (own["blocks"], own["hidden"],
                                                                 own["mlp"])
        scale = 1.0 if a["counted"] else (a["blocks"] * (a["hidden"] + a["mlp"]) /
                                          (own["blocks"] * (own["hidden"] + own["mlp"])))
        for k, v in c.items():
            a[k] = v * scale
    return archs


def find_arch(archs, arch, variant="-"):
    base = None
    for a in archs:
        if a["arch"] != arch:
            continue
        if a["variant"] == variant:
            return a
        if a["variant"] == "-":
            base = a
    return base


# ---- the points, normalised ---------------------------------------------------------------------

ARCH_WORDS = [  # (pattern on the point's arch text, arch, variant)
    (r"^flux_kontext", "flux_kontext", "-"), (r"^flux2_klein_9b", "flux2_klein_9b", "-"),
    (r"^flux2_klein_4b", "flux2_klein_4b", "-"), (r"^flux2", "flux2", "-"),
    (r"^flux", "flux", "-"), (r"^flex1", "flux", "flex"), (r"^flex2", "flex2", "-"),
    (r"^chroma", "chroma", "-"), (r"^qwen_image_edit_plus", "qwen_image_edit_plus", "-"),
    (r"^qwen_image_edit", "qwen_image_edit", "-"), (r"^qwen_image", "qwen_image", "-"),
    (r"^zimage", "zimage", "-"), (r"^wan21_1\.3b", "wan21", "1.3b"), (r"^wan21_14b", "wan21", "-"),
    (r"^wan22_14b", "wan22_14b", "-"), (r"^wan22_5b", "wan22_5b", "-"),
    (r"^hidream", "hidream", "-"), (r"^sd35", "sd3", "-"), (r"^sdxl", "sdxl", "-"),
    (r"^sd15", "sd1", "-"), (r"^lumina2", "lumina2", "-"), (r"^ltx2\.3", "ltx2.3", "-"),
    (r"^ltx2", "ltx2", "-"), (r"^krea2", "krea2", "-"),
]

# The web UI's defaults where a report does not say (memory-reference §6).
UI_LOW_VRAM = {"wan22_14b", "qwen_image", "qwen_image_edit", "qwen_image_edit_plus", "flux2",
               "zimage", "ltx2", "ltx2.3", "flux2_klein_9b", "flux2_klein_4b", "krea2"}
UI_NO_QUANT = {"lumina2", "sdxl", "sd1"}


def first_number(s):
    m = re.search(r"\d+(?:\.\d+)?", s or "")
    return float(m.group(0)) if m else None


def source_key(s):
    """A point's source, as a whole: the page (without its anchor), or the repository file."""
    s = s.strip()
    if s.startswith("http"):
        return s.split()[0].split("#")[0].rstrip("/).,;")
    t = s.split()
    return " ".join(t[:2]) if t else s


def quantize_of(q, aitk, arch):
    """(quantize, qtype) from a report's words."""
    q = q.lower()
    head = re.split(r"[;(]", q)[0]
    if head.startswith("unknown") or head.startswith("ui default"):
        m = re.search(r"qfloat8|uint\d", q)
        if m:
            return True, m.group(0)
        quantize = aitk and arch not in UI_NO_QUANT
        return quantize, ("qfloat8" if quantize else "bf16")
    if head.startswith("none") or "bfloat_16" in head:
        return False, "bf16"
    m = re.search(r"uint(\d)", head)
    if m:
        return True, "uint" + m.group(1) + ("|ara" if "ara" in head and "no ara" not in q else "")
    if re.search(r"nf4|4-bit|int4|nfloat_4", head):
        return True, "nf4"
    if "int2" in head:
        return True, "int2"
    if re.search(r"int8|int_w8|int w8|8-bit", head):
        return True, "int8"
    if re.search(r"fp8|float8|float_8", head):
        return True, "qfloat8"
    return None, None


def offload_of(r, aitk):
    """(offload, share of the transformer, share of the text encoder) an AI Toolkit report says;
    None when another trainer swaps blocks or offloads layers (not modelled)."""
    text = (r["quantize"] + " " + r["low_vram"] + " " + r["text_encoder"] + " " +
            r["grad_checkpointing"]).lower()
    if aitk:
        m = re.search(r"layer_offloading_transformer_percent ([\d.]+)", text)
        tr = float(m.group(1)) if m else 0.0
        te = 1.0 if "offloaded 100%" in text else 0.0
        return (tr > 0 or te > 0), tr, te
    swap = [int(x) for x in re.findall(r"blocks_to_swap (\d+)", text)]
    if any(swap) or re.search(r"\d+% (layer )?offload|offload_fraction 0?\.\d*[1-9]|ramtorch incl|"
                              r"layer_offload_fraction|activation.offload|block swap", text):
        return None
    return False, 0.0, 0.0


def peak_of(pk, outcome):
    """(GiB, kind, phase) of a report's peak: kind "peak" or "lower" (an OOM's held + asked);
    None when it gives no figure."""
    s = pk.lower()
    phase = "training"
    if re.search(r"caching|caption pass|during te", s):
        phase = "caching"
    if "(min" in s or "ceiling" in s or "near" in s or "shared memory" in s:
        return None
    m = re.search(r"(?:h100|l40s)(?: same config:| peak(?: for same config)?) ([\d.]+)", s)
    if m:
        return float(m.group(1)), "peak", phase
    if s.startswith("unknown"):
        return None
    if "at failure" in s:
        held = first_number(s)
        rq = re.search(r"request ([\d.]+) (gib|mib)", s)
        ask = (float(rq.group(1)) / (1024 if rq.group(2) == "mib" else 1)) if rq else 0.0
        return held + ask, "lower", phase
    if "needed" in s:
        return first_number(s), "lower", phase
    head = s.split("(")[0]
    nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", head)]
    if not nums:
        return None
    if head.strip().startswith(">"):
        return nums[0], "lower", phase
    if re.search(r"\d\s*-\s*\d", head):
        return (nums[0] + nums[1]) / 2, "peak", phase
    return nums[0], "peak", phase


# Where a row's own text is wrong, with what the source shows. SimpleTuner's checkpointing sweep
# (documentation/experimental/SEGMENTED_CHECKPOINTING.md) heads each table with the example's
# `resolution`, but the examples of these rows train on
# multidatabackend-small-dreambooth-512px.json (512 px square crops, its own `resolution`).
CORRECTIONS = {pid: (512.0, "SimpleTuner's example trains on its 512 px dataset")
               for pid in ("G064", "G065", "G066", "G067", "G068", "G091", "G092", "G093",
                           "G094")}


def normalise(r, archs):
    """A point as an est_input (a dict of its fields) with its outcome and peak, or
    (None, reason) when it stays out of the calibration."""
    pid, text = r["id"], " ".join(r.values()).lower()
    aitk = r["trainer"].startswith("aitk")
    out = r["outcome"].lower()
    ev = r["evidence"].lower()
    if "regression" in ev or "after update" in out or "post-update" in text:
        return None, "regression (worked on an older commit)"
    if "spill" in out or "shared-memory" in text:
        return None, "Windows shared-memory spill, not a VRAM point"
    if "host" in out:
        return None, "host-RAM kill, not a VRAM point"
    if "checkpoint saving" in out:
        return None, "out of memory while saving (not a phase the estimate models)"
    if "full" in r["rank"].lower() or "full fine-tune" in r["arch"].lower():
        return None, "full fine-tune (not calibrated)"
    gct = r["grad_checkpointing"].lower()
    if r["trainer"].startswith("simpletuner") and r["arch"].startswith("wan"):
        # tools/gpu-peaks/README.md: SimpleTuner's Wan streams blocks from the CPU and runs its
        # own attention, so its peaks are not the model's as AI Toolkit runs it.
        return None, "SimpleTuner's Wan streams blocks from the CPU (not modelled)"
    if re.search(r"unsloth|partial|activation-offload|interval", gct):
        return None, "partial or offloaded checkpointing (not modelled)"
    off = offload_of(r, aitk)
    if off is None:
        return None, "block swapping or layer offloading of another trainer (not modelled)"
    if (" / " in r["arch"] or "count unknown" in r["frames"] or "decent" in r["resolution"] or
            (r["resolution"] == "unknown" and r["frames"] == "unknown")):
        return None, "settings not known well enough"
    arch = variant = None
    for pat, ar, va in ARCH_WORDS:
        if re.match(pat, r["arch"]):
            arch, variant = ar, va
            break
    a = find_arch(archs, arch, variant) if arch else None
    if not a:
        return None, "no row for this arch"
    quantize, qtype = quantize_of(r["quantize"], aitk, arch)
    if quantize is None:
        return None, "quantization not known well enough"
    q = r["quantize"].lower()
    te_text = r["text_encoder"].lower()
    tem = re.search(r"te (qfloat8|float8|fp8|int8)", q)
    quantize_te = bool(tem) or "quantized" in te_text or quantize or "fp8" in te_text
    qtype_te = "qfloat8"
    lv = r["low_vram"].lower()
    low_vram = (lv.startswith("true") or lv.startswith("tested true") or
                (lv in ("unknown", "n/a") and aitk and arch in UI_LOW_VRAM))
    res_text = r["resolution"].lower()
    nums = [float(x) for x in re.findall(r"\d+", res_text)]
    if re.search(r"\d\s*x\s*\d", res_text) and len(nums) >= 2:
        res = math.sqrt(nums[0] * nums[1])
    elif [n for n in nums if n >= 64]:
        res = max(n for n in nums if n >= 64)
    elif res_text.startswith("low"):
        res = 512
    else:
        res = 1024.0
    batch = first_number(r["batch_size"]) or 1
    gc = not gct.startswith("false") and "gradient_checkpointing false" not in gct
    if "regional compile on" in gct:
        gc = False  # the report's own note: the peak stays near the uncheckpointed one
    rk = r["rank"].lower()
    if re.match(r"\s*\d+\s*-\s*\d+", rk):
        rank = max(float(x) for x in re.findall(r"\d+", rk))
    elif re.match(r"\s*~?\d", rk):
        rank = first_number(rk)
    else:
        rank = 32.0 if arch.startswith("wan") and aitk else 16.0
    fr = r["frames"].lower()
    frames = 1
    if re.match(r"\s*>\s*\d", fr):
        frames = int(first_number(fr)) + 4
    elif re.match(r"\s*\d+\s*-\s*\d+", fr):
        frames = int(max(float(x) for x in re.findall(r"\d+", fr)))
    elif re.match(r"\s*\d", fr):
        frames = int(first_number(fr))
    elif fr.startswith("short"):
        frames = 33
    if a["family"] not in VIDEO_FAMILIES:
        frames = 1
    opt = r["optimizer"].lower()
    optimizer = ("adamw" if "adam8bit false" in opt else
                 opt.split()[0] if opt and not opt.startswith(("unknown", "preset", "n/a")) else
                 "adamw8bit" if aitk else "adamw")
    if "not cached" in te_text or "kept on gpu" in te_text or "on gpu" in te_text:
        te_gpu = True
    elif re.search(r"cach|precomputed|freed|unload|not trained", te_text):
        te_gpu = False
    elif aitk or re.search(r"kept|loaded|trained", te_text):
        te_gpu = True
    else:
        te_gpu = False  # other trainers cache the text embeddings by default
    card = r["card_vram_gb"].strip()
    card_gib = None
    if re.fullmatch(r"\d+", card):
        card_gib = CARD_TABLE.get(int(card), int(card) * 0.98)
    elif re.fullmatch(r"\d+-\d+", card):
        card_gib = CARD_TABLE.get(int(card.split("-")[0]))
    outcome = "fits" if out.startswith("fits") else "oom" if out.startswith("oom") else None
    weight = 0.5 if re.search(r"hedged|claim|preset|config_comment|doc_table", out + " " + ev) else 1.0
    pk = peak_of(r["peak_gb"], outcome)
    peak = peak_kind = None
    peak_phase = "training"
    if pk:
        peak, peak_kind, peak_phase = pk
        if not aitk and peak_phase != "training":
            peak = None  # another trainer's caching pass: its loader is not the one modelled
        if peak is not None and outcome == "oom" and peak_kind == "peak" and card_gib and \
                peak <= card_gib * 1.02 and not re.search(r"h100|l40s", r["peak_gb"].lower()):
            peak_kind = "lower"  # a figure at the moment of an OOM: what it held, at least
    # A figure of what PyTorch allocated (torch.cuda.max_memory_allocated) leaves out the CUDA
    # context the card holds beside it: the point is compared as the card holds it. SimpleTuner's
    # checkpointing sweep names no metric, but its sibling table (CONVROT.md, same commit and
    # pods) says "Peak allocated VRAM", and the trainer's only peak figure is
    # torch.cuda.max_memory_allocated (simpletuner/helpers/training/trainer.py:2846).
    allocated = r"max_memory_allocated|max allocated|peak allocated"
    if r["trainer"].startswith("simpletuner"):
        allocated += r"|benchmark sweep peak"
    if peak is not None and peak_kind == "peak" and re.search(allocated, ev.lower()):
        peak += CONTEXT_GIB
    # A figure someone measured (a tool, an allocator message, a benchmark), not a claim.
    measured = bool(re.match(r"(measured|observed|vendor_measurement|doc_measurement|user_report "
                             r"\(observed|user_report by wobba|wobba)", ev))
    if "torchao" in r["quantize"].lower() and not gc:
        # SimpleTuner's sweep: fp8-torchao without checkpointing peaks above bf16 (Kolors 8.79
        # against 7.22 GiB, though its weights are half), as it keeps its own copies for
        # backward; AI Toolkit's quantization does not train that way
        return None, "torchao float8 without checkpointing (not modelled)"
    if measured and peak_kind == "peak" and not aitk and r["resolution"] == "unknown" and \
            gct == "unknown":
        # a measured step whose size and checkpointing the report leaves unsaid calibrates
        # nothing: any activations would match it
        return None, "a measured peak without its resolution or checkpointing"
    if outcome is None and peak is None:
        return None, "neither an outcome nor a peak"
    if card_gib is None and peak is None:
        return None, "no card and no peak"
    sampling = aitk
    # SimpleTuner's LoRA: on the attention projections (DEFAULT_LORA_TARGET of each model) and
    # in bf16 (PEFT adapters take the base layer's dtype; its gradients stay bf16 by default).
    simpletuner = r["trainer"].startswith("simpletuner")
    fix = CORRECTIONS.get(pid)
    if fix:
        res = fix[0]
    p = {"id": pid, "source": source_key(r["source"]), "arch": arch, "variant": variant,
         "aitk": aitk, "quantize": quantize, "qtype": qtype, "quantize_te": quantize_te,
         "qtype_te": qtype_te, "low_vram": low_vram, "offload": off[0], "offload_tr": off[1],
         "offload_te": off[2], "assistant": False, "res": float(round(res)),
         "frames": frames, "batch": int(batch), "gc": gc, "rank": float(rank),
         "optimizer": optimizer, "adapter_attn": simpletuner,
         "adapter_bf16": simpletuner, "te_gpu": te_gpu, "cache_latents": True, "control": False,
         "sampling": sampling, "baseline": sampling, "sample_w": 1024.0, "sample_h": 1024.0,
         "sample_frames": float(frames if sampling else 1), "guidance": sampling,
         "card_gib": card_gib, "outcome": outcome, "weight": weight, "peak": peak,
         "peak_kind": peak_kind, "peak_phase": peak_phase, "measured": measured,
         "quoted": pk[0] if pk else None,
         "borrowed": bool(re.match(r"unknown \((h100|l40s)", r["peak_gb"].lower()))}
    return p, None


def drop_borrowed_twins(points):
    """An OOM row that quotes the peak of the same settings on a larger card ("unknown (H100 same
    config: 44.58 GiB)") holds no measurement of its own when that larger card's run is a row of
    the same source: its peak is dropped, so that one measurement is fitted and counted once.
    The ids whose peak was dropped, in order."""
    own = {(p["source"], round(p["quoted"], 2)) for p in points
           if p["peak"] is not None and not p["borrowed"]}
    dropped = []
    for p in points:
        if p["borrowed"] and p["peak"] is not None and \
                (p["source"], round(p["quoted"], 2)) in own:
            p["peak"] = p["peak_kind"] = None
            dropped.append(p["id"])
    return dropped


def judged_phases(p):
    """The phases a point's outcome is judged by: all of an AI Toolkit run (its loader is the one
    modelled), the training step of another trainer's."""
    return PHASES if p["aitk"] else ("training",)


# ---- the fit and its cross-validation ----------------------------------------------------------

K_TOT = [0.8 + 0.025 * i for i in range(21)]           # 0.8 .. 1.3
K_ACT = [0.25 * 10 ** (i / 20) for i in range(31)]     # 0.25 .. 8
K_START = (1.1, 1.0, 1.0)
PRIOR = 0.05   # the pull of each activation constant towards the count (1.0), per log unit²


def total_share(part, k):
    """The share K_TOTAL scales a phase by: the allocator's rounding and workspace of the
    training step (part[4]), whose peaks it is fitted on; the other phases are their parts
    (weights placed whole, a sample's working set) in their own bands."""
    return k[0] if len(part) > 4 and part[4] else 1.0


def value(part, k):
    """A phase in GiB from its parts (base, activations) and constants k = (total share,
    activations with checkpointing, activations without)."""
    return total_share(part, k) * (part[0] + (k[1] if part[2] else k[2]) * part[1]) + CONTEXT_GIB


def loss(pts, k):
    """The error of constants k on points: the weighted share classified wrong by the centre,
    plus the mean log error on peaks (a lower bound counts only when the estimate is under it),
    plus the prior that keeps the counted activations as counted unless the points say not."""
    wrong = wsum = 0.0
    errs = []
    for p in pts:
        if p["outcome"] and p["card_gib"]:
            v = max(value(p["parts"][ph], k) for ph in p["judge"])
            wsum += p["weight"]
            if (v <= p["card_gib"]) != (p["outcome"] == "fits"):
                wrong += p["weight"]
        if p["peak"] is not None:
            v = value(p["parts"][p["peak_phase"]], k)
            e = math.log(p["peak"] / v)
            errs.append(p["weight"] * (abs(e) if p["peak_kind"] == "peak" else max(e, 0.0)))
    return ((wrong / wsum if wsum else 0.0) + (statistics.mean(errs) if errs else 0.0) +
            PRIOR * (math.log(k[1]) ** 2 + math.log(k[2]) ** 2))


def fit_k(pts):
    """The constants by coordinate descent over their grids (three rounds)."""
    k = list(K_START)
    for _ in range(3):
        for i, grid in ((0, K_TOT), (1, K_ACT), (2, K_ACT)):
            best = None
            for g in grid:
                t = list(k)
                t[i] = g
                key = (round(loss(pts, t), 9), abs(math.log(g / K_START[i])))
                if best is None or key < best[0]:
                    best = (key, g)
            k[i] = best[1]
    return tuple(k)


def basis_of(a):
    return "counted" if a["counted"] and not a["nominal"] else "scaled"


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return 0.0
    i = q * (len(xs) - 1)
    lo = int(math.floor(i))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def bands_from(resid):
    """The training step's bands from residuals (peak / estimate - 1) of points left out, as
    {basis: [(r, family, source)]}: (lo, hi) that hold about COVER of them, per basis (pooled
    when a basis has few), and per family where a family has FAMILY_MIN residuals from two
    sources or more (its own spread, not the others')."""
    out = {}
    tail = (1 - COVER) / 2
    pooled = [x[0] for rs in resid.values() for x in rs]

    def band(rs):
        return (min(max(-quantile(rs, tail), 0.05), 0.6),
                min(max(quantile(rs, 1 - tail), 0.05), 0.6))
    fams = {}
    for rs in resid.values():
        for r, fam, src in rs:
            fams.setdefault(fam, []).append((r, src))
    own = {f for f, xs in fams.items()
           if len(xs) >= FAMILY_MIN and len({src for _, src in xs}) >= 2}
    for f in own:
        out["fam:" + f] = band([r for r, _ in fams[f]])
    for basis in ("counted", "scaled"):
        rs = [x[0] for x in resid.get(basis, []) if x[1] not in own]
        if len(rs) < 8:
            rs = pooled
        out[basis] = band(rs)
    return out


def band_of(bands, ph, basis, family=None):
    if ph == "training":
        return bands.get("fam:%s" % family, bands[basis])
    if ph == "model_load" and basis == "counted":
        return LOAD_BAND
    return ROUGH_BAND


def bounds(p, ph, k, bands):
    """The band of a phase in GiB: the training step's from its residuals, of the whole; the
    other phases' weights are arithmetic (LOAD_BAND) and the rest rough."""
    part = p["parts"][ph]
    c = value(part, k)
    lo, hi = band_of(bands, ph, p["basis"], p["family"])
    # the training band is of the whole step (its residuals are); elsewhere the weights are
    # arithmetic unless the parameter counts are nominal
    arith = 0.0 if p["nominal"] or ph == "training" else total_share(part, k) * part[3]
    rest = c - arith
    return (arith * (1 - LOAD_BAND[0]) + rest * (1 - lo),
            arith * (1 + LOAD_BAND[1]) + rest * (1 + hi))


def verdict(p, k, bands):
    """The verdict of the estimate for a point's card: ("fits"|"tight"|"no", phase), the phases
    checked in the order the trainer runs them."""
    v, at = "fits", None
    for ph in PHASES:
        if ph not in p["judge"] or ph not in p["parts"]:
            continue
        low, high = bounds(p, ph, k, bands)
        if low > p["card_gib"]:
            return "no", ph
        if high > p["card_gib"] and v == "fits":
            v, at = "tight", ph
    return v, at


def score(pts, consts):
    """The figures of issue 26 on points, each judged with consts[id] = (kt, ka, bands): verdict
    score, "all fits" score, OOM caught, peaks in band, median band half-width."""
    right = allfits = n = 0.0
    caught = ooms = 0
    inside = peaks = 0
    widths = []
    for p in pts:
        k, bands = consts[p["id"]]
        if p["outcome"] and p["card_gib"]:
            v, _ = verdict(p, k, bands)
            centre = max(value(p["parts"][ph], k) for ph in p["judge"] if ph in p["parts"])
            ok = (v == "fits" and p["outcome"] == "fits") or (v == "no" and p["outcome"] == "oom")
            if v == "tight":
                ok = (centre <= p["card_gib"]) == (p["outcome"] == "fits")
            right += p["weight"] * ok
            allfits += p["weight"] * (p["outcome"] == "fits")
            n += p["weight"]
            if p["outcome"] == "oom":
                ooms += 1
                caught += v != "fits"
        if p["peak"] is not None and p["measured"]:
            c = value(p["parts"][p["peak_phase"]], k)
            low, high = bounds(p, p["peak_phase"], k, bands)
            peaks += 1
            widths.append((high - low) / 2 / c)
            if p["peak_kind"] == "lower":
                inside += high >= p["peak"]
            else:
                inside += low <= p["peak"] <= high
    return {"n": n, "score": right / n if n else float("nan"),
            "allfits": allfits / n if n else float("nan"), "ooms": ooms, "caught": caught,
            "peaks": peaks, "inside": inside,
            "width": statistics.median(widths) if widths else float("nan")}


def cross_validate(points):
    """Each source left out in turn: the constants fitted without it, its points' residuals from
    them; then each source's band from the other sources' residuals. Returns consts per point
    id (as score() takes them) and the left-out residuals."""
    sources = sorted({p["source"] for p in points})
    fitted, resid_of = {}, {}
    for s in sources:
        train = [p for p in points if p["source"] != s]
        k = fit_k(train)
        for p in points:
            if p["source"] != s:
                continue
            fitted[p["id"]] = k
            if p["peak"] is not None and p["peak_kind"] == "peak" and \
                    p["peak_phase"] == "training" and p["measured"]:
                v = value(p["parts"]["training"], k)
                resid_of[p["id"]] = (p["source"], p["basis"], p["peak"] / v - 1, p["family"])
    consts = {}
    for s in sources:
        rs = {}
        for src, basis, r, fam in resid_of.values():
            if src != s:
                rs.setdefault(basis, []).append((r, fam, src))
        b = bands_from(rs)
        for p in points:
            if p["source"] == s:
                consts[p["id"]] = (fitted[p["id"]], b)
    return consts, resid_of


# ---- output ------------------------------------------------------------------------------------

def fmt(x):
    return "%.6g" % x


INPUT_COLS = ["id", "arch", "variant", "quantize", "qtype", "quantize_te", "qtype_te", "low_vram",
              "offload", "offload_tr", "offload_te", "assistant", "res", "frames", "batch", "gc",
              "rank", "optimizer", "adapter_attn", "adapter_bf16", "te_gpu", "cache_latents",
              "control", "sampling", "baseline", "sample_w", "sample_h", "sample_frames",
              "guidance"]


def cell(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "-"
    if isinstance(v, float):
        return fmt(v)
    return str(v)


def table_text(archs, k, bands, counts_r, fam_range):
    b = lambda x: "true" if x else "false"
    enum_tr = {"gpu": "LT_GPU", "gpu_unless_low_vram": "LT_GPU_UNLESS_LOW_VRAM", "cpu": "LT_CPU"}
    enum_te = {"gpu_bf16": "LE_GPU_BF16", "cpu_quant": "LE_CPU_QUANT"}
    enum_wt = {"yes": "WT_YES", "no": "WT_NO", "unless_low_vram": "WT_UNLESS_LOW_VRAM",
               "te_first": "WT_TE_FIRST"}
    h = ["/* Generated by scripts/calibrate.py from data/arch-memory.tsv, data/activations-sim.tsv"
         " and data/fit-points.tsv.", " * Do not edit: change the data and run the script (the"
         " test suite fails when this file and the data", " * disagree). */", "",
         "/* The constants fitted on every point (cross-validated with each source left out). */",
         "static const double K_TOTAL = %s;   /* allocator rounding and workspace, a share of all */"
         % fmt(k[0]),
         "static const double K_ACT_GC = %s;  /* counted activations, checkpointing on */" % fmt(k[1]),
         "static const double K_ACT_NOGC = %s; /* counted activations, checkpointing off */"
         % fmt(k[2]), "",
         "/* Fixed parts no point calibrates. */",
         "static const double CONTEXT_GIB = %s;" % fmt(CONTEXT_GIB),
         "static const double KEPT_BF16 = %s;" % fmt(KEPT_BF16),
         "static const double BLOCK_SHARE = %s;" % fmt(BLOCK_SHARE),
         "static const double LORA_PER_RANK = %s;" % fmt(LORA_PER_RANK),
         "static const double IMAGE_DEC = %s, IMAGE_ENC = %s;" % (fmt(IMAGE_DEC), fmt(IMAGE_ENC)),
         "static const double VIDEO_DEC = %s, VIDEO_ENC = %s;" % (fmt(VIDEO_DEC), fmt(VIDEO_ENC)),
         "static const double SAMP_BLOCK = %s;" % fmt(SAMP_BLOCK), "",
         "/* Bands (-lo, +hi of the phase): the training step's from left-out residuals, per basis;",
         " * the load's arithmetic; the rough phases'. */",
         "static const struct est_band est_train_band[2] = {",
         "\t{ %s, %s, %d }, /* its own counted activations */" % (
             fmt(bands["counted"][0]), fmt(bands["counted"][1]), len(counts_r.get("counted", []))),
         "\t{ %s, %s, %d }, /* a sibling's form, or nominal parameters */" % (
             fmt(bands["scaled"][0]), fmt(bands["scaled"][1]), len(counts_r.get("scaled", []))),
         "};",
         "/* Families whose own residuals (%d or more, two sources) give them their own band. */"
         % FAMILY_MIN,
         "static const struct { const char *family; struct est_band b; } est_family_band[] = {"] + [
             '\t{ "%s", { %s, %s, %d } },' % (key[4:], fmt(v[0]), fmt(v[1]), sum(
                 1 for rs in counts_r.values() for x in rs if x[1] == key[4:]))
             for key, v in sorted(bands.items()) if key.startswith("fam:")] + [
         "\t{ NULL, { 0, 0, 0 } },",
         "};",
         "static const struct est_band est_load_band = { %s, %s, 0 };" % (fmt(LOAD_BAND[0]),
                                                                           fmt(LOAD_BAND[1])),
         "static const struct est_band est_rough_band = { %s, %s, 0 };" % (fmt(ROUGH_BAND[0]),
                                                                            fmt(ROUGH_BAND[1])),
         "",
         "/* What PyTorch reports for cards sold by these sizes (GiB). */",
         "static const struct { double sold, gib; } card_table[] = {"]
    items = ["{ %d, %s }" % (k, fmt(v)) for k, v in sorted(CARD_TABLE.items())]
    for i in range(0, len(items), 6):
        h.append("\t" + ", ".join(items[i:i + 6]) + ",")
    h += ["};", "", "static const struct est_arch est_archs[] = {"]
    for a in archs:
        mb, mf = fam_range.get(a["family"], (1024.0, 1))
        h.append('\t{ "%s", "%s", "%s", %s, %s, %d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, '
                 '%s, %s, %s,' % (
                     a["arch"], a["variant"], a["family"], fmt(a["tr_b"]), fmt(a["hidden"]),
                     a["experts"], fmt(a["te_b"]), fmt(a["aux_b"]), enum_tr[a["load_tr"]],
                     enum_te[a["load_te"]], enum_wt[a["tr_with_te"]], b(a["park"]),
                     b(a["one_expert"]), b(a["te_flag_quantize"]), b(a["te_qtype_te"]),
                     fmt(a["tok_px"]), fmt(a["tok_mult"]), fmt(a["frame_div"]), b(a["cfg"]),
                     b(a["nominal"])))
        h.append('\t  %s, %s, %s, %s, %s, %s, %s, %s, "%s", %s, %s, %d },' % (
            fmt(a["sv_img"]), fmt(a["sv_txt"]), fmt(a["ck_img"]), fmt(a["ck_txt"]),
            fmt(a["bl_img"]), fmt(a["bl_txt"]), fmt(a["txt_tok"]), b(a["counted"]), a["sim"],
            fmt(mb), fmt(mf), a["blocks"]))
    h += ["};", ""]
    return "\n".join(h)


def points_text(points, k):
    cols = INPUT_COLS + ["aitk", "card_gib", "outcome", "peak", "peak_kind", "peak_phase"] + \
        ["pred_" + ph for ph in PHASES]
    lines = ["\t".join(cols)]
    for p in points:
        row = [cell(p[c]) for c in cols[:-len(PHASES)]]
        for ph in PHASES:
            row.append(fmt(value(p["parts"][ph], k)) if ph in p["parts"] else "-")
        lines.append("\t".join(row))
    return "\n".join(lines) + "\n"


def report(title, pts, consts, families):
    print(title)
    print("  %-8s %5s %6s %7s %9s %7s %6s" % ("family", "jobs", "score", "all-fit", "OOM caught",
                                              "peaks in", "band"))
    rows = [(f, [p for p in pts if p["family"] == f]) for f in families] + [("all", pts)]
    for name, ps in rows:
        if not ps:
            continue
        s = score(ps, consts)
        print("  %-8s %5d %6s %7s %9s %7s %6s" % (
            name, s["n"], "-" if s["n"] == 0 else "%.3f" % s["score"],
            "-" if s["n"] == 0 else "%.3f" % s["allfits"],
            "%d/%d" % (s["caught"], s["ooms"]), "%d/%d" % (s["inside"], s["peaks"]),
            "-" if s["peaks"] == 0 else "±%.0f%%" % (100 * s["width"])))
    return score(pts, consts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when the committed files differ from the data")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    args = ap.parse_args()

    archs = load_archs()
    raw = read_tsv(os.path.join(ROOT, "data", "fit-points.tsv"))
    points, left_out = [], []
    for r in raw:
        p, why = normalise(r, archs)
        if not p:
            left_out.append((r["id"], r["arch"], why))
            continue
        a = find_arch(archs, p["arch"], p["variant"])
        p["parts"] = estimate(p, a)
        p["judge"] = judged_phases(p)
        p["basis"] = basis_of(a)
        p["family"] = a["family"]
        p["nominal"] = a["nominal"]
        points.append(p)
    twins = drop_borrowed_twins(points)
    families = []
    for a in archs:
        if a["family"] not in families:
            families.append(a["family"])

    k = fit_k(points)
    consts, resid = cross_validate(points)
    all_resid = {}
    for src, basis, r, fam in resid.values():
        all_resid.setdefault(basis, []).append((r, fam, src))
    bands = bands_from(all_resid)
    fam_range = {}
    for p in points:
        mb, mf = fam_range.get(p["family"], (0.0, 1))
        fam_range[p["family"]] = (max(mb, p["res"]), max(mf, p["frames"]))

    table = table_text(archs, k, bands, all_resid, fam_range)
    pts = points_text(points, k)
    table_path = os.path.join(ROOT, "src", "core", "estimate_table.h")
    pts_path = os.path.join(ROOT, "tests", "estimate", "points.tsv")
    if args.check:
        bad = []
        for path, text in ((table_path, table), (pts_path, pts)):
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        bad.append(path)
            except OSError:
                bad.append(path)
        for path in bad:
            print("calibrate: %s differs from what the data gives; run scripts/calibrate.py"
                  % os.path.relpath(path, ROOT), file=sys.stderr)
        return 1 if bad else 0
    for path, text in ((table_path, table), (pts_path, pts)):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    if not args.quiet:
        print("%-5s %-18s %-5s %6s %8s %8s %7s  %s" % ("id", "arch", "out", "card", "peak",
                                                        "est", "resid", "verdict (left out)"))
        for p in points:
            k_p, b_p = consts[p["id"]]
            ph = p["peak_phase"] if p["peak"] is not None else None
            c = value(p["parts"][ph], k_p) if ph else \
                max(value(p["parts"][x], k_p) for x in p["judge"] if x in p["parts"])
            res = "%+.0f%%" % (100 * (p["peak"] / c - 1)) if p["peak"] is not None else ""
            if p["peak_kind"] == "lower":
                res = "≥" + res
            vd = ""
            if p["outcome"] and p["card_gib"]:
                v, at = verdict(p, k_p, b_p)
                vd = "%s%s" % (v, " at " + at if at else "")
            print("%-5s %-18s %-5s %6s %8s %8.1f %7s  %s" % (
                p["id"], p["arch"] + ("" if p["variant"] == "-" else " " + p["variant"]),
                p["outcome"] or "-", fmt(p["card_gib"]) if p["card_gib"] else "-",
                fmt(p["peak"]) if p["peak"] is not None else "-", c, res, vd))
        print()
        for pid, arch, why in left_out:
            print("left out %-5s %-34s %s" % (pid, arch[:34], why))
        for pid in twins:
            print("peak of %s not counted again: the larger card's run of the same settings is "
                  "its own row" % pid)
        for pid, (res, why) in sorted(CORRECTIONS.items()):
            print("corrected %-5s resolution %g px: %s" % (pid, res, why))
        print()
        worst = sorted(resid.items(), key=lambda kv: -abs(kv[1][2]))[:5]
        print("worst left-out residuals: " + ", ".join("%s %+.0f%%" % (k, 100 * v[2])
                                                       for k, v in worst))
    print("constants: K_TOTAL %.3f, K_ACT_GC %.3f, K_ACT_NOGC %.3f; training bands " % k +
          ", ".join("%s -%.0f%%/+%.0f%%" % (b, 100 * v[0], 100 * v[1])
                    for b, v in sorted(bands.items())))
    print("%d points used (%d sources), %d left out" % (
        len(points), len({p["source"] for p in points}), len(left_out)))
    s = report("cross-validated (each source left out of the fit and of its band):", points,
               consts, families)
    return 0


if __name__ == "__main__":
    sys.exit(main())
