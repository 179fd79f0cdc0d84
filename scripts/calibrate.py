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

# Constants of the model (the same in src/core/estimate.c).
CONTEXT_GIB = 0.45
GC_OFF_MULT = 8.0
KEPT_BF16 = 0.02
BLOCK_SHARE = 0.03
LORA_PER_RANK = 1.4
ROUGH_BAND = 0.3

# Priors for the parts no point measures (GiB per token or per pixel); said "rough" in output.
IMAGE_DEC, IMAGE_ENC = 2.4e-6, 1.2e-6
VIDEO_DEC, VIDEO_ENC = 2.0e-7, 1.0e-7
SAMP_SHARE = 0.06      # one sampling pass per token, as a share of a training step's activations
DEFAULT_ACT = 2.5e-4   # GiB per token for a family without points
VIDEO_FAMILIES = {"wan", "ltx"}

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


def estimate(p, a, fam):
    """The phases in GiB for settings p (a normalised point) on arch row a, family coefficients
    fam. Mirrors estimate_job() for a job that caches its latents."""
    low = p["low_vram"]
    tr_bf16 = a["tr_b"] * 1e9 * 2 / GIB
    tq = qbytes(a["tr_b"], qtype_bpp(p["qtype"])) if p["quantize"] else tr_bf16
    te_quant = p["quantize"] if a["te_flag_quantize"] else p["quantize_te"]
    te_qtype = p["qtype_te"] if a["te_qtype_te"] else p["qtype"]
    te_bf16 = a["te_b"] * 1e9 * 2 / GIB
    eq = qbytes(a["te_b"], qtype_bpp(te_qtype)) if te_quant else te_bf16
    aux = a["aux_b"] * 1e9 * 2 / GIB
    tr_share = te_share = 1.0
    if p["offload_te"] is not None:
        tr_share = max(1.0 - p["offload_tr"], 0.05)
        te_share = max(1.0 - p["offload_te"], 0.05)
    experts_train = 1 if (low and a["one_expert"]) else a["experts"]
    te_gpu = p["te_mode"] == "gpu"
    res = p["res"]
    frames = p["frames"] if a["family"] in VIDEO_FAMILIES else 1
    lframes = math.floor((frames - 1) / a["frame_div"]) + 1 if frames > 1 else 1
    tokens = (res / a["tok_px"]) * (res / a["tok_px"]) * a["tok_mult"] * lframes
    if p["rank"] is not None:
        lora_p = p["rank"] * LORA_PER_RANK * a["tr_b"] * 1e9 / a["hidden"] * a["experts"]
        lora_w = lora_p * 4.0 / GIB
        lora_state = lora_p * (4.0 + opt_bytes(p["optimizer"])) / GIB
    else:
        lora_p = a["tr_b"] * 1e9
        lora_w = 0.0
        lora_state = lora_p * (2.0 + opt_bytes(p["optimizer"])) / GIB
    w_train = tq * tr_share * experts_train + (eq * te_share if te_gpu else 0) + aux
    act = p["batch"] * tokens * fam["act"] * (1.0 if p["gc"] else GC_OFF_MULT)
    pixels = res * res * frames
    train = w_train + lora_w + lora_state + act + CONTEXT_GIB
    if p["quantize"]:
        on_gpu = a["load_tr"] == "gpu" or (a["load_tr"] == "gpu_unless_low_vram" and not low)
        step_tr = tr_bf16 + tq * (a["experts"] - 1) if on_gpu else tr_bf16 * BLOCK_SHARE
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
    resident = (0 if (low and a["park"]) else tq * tr_share * experts_train) + eq * te_share
    load = max(step_tr, step_te, resident) + aux + CONTEXT_GIB
    cache = resident + aux + pixels * fam["enc"] + CONTEXT_GIB
    out = {"model_load": load, "caching": cache, "training": train,
           "_w_training": w_train, "_w_caching": resident + aux}
    if p["sample"]:
        s = p["sample"]
        s_lf = 1
        s_tokens = s / a["tok_px"] * s / a["tok_px"] * a["tok_mult"] * s_lf
        cfg = 2.0 if a["cfg"] else 1.0
        experts_sample = 1 if (low and a["one_expert"]) else a["experts"]
        s_weights = tq * tr_share * experts_sample + (eq * te_share if te_gpu else 0) + aux
        s_opt = lora_w + lora_p * opt_bytes(p["optimizer"]) / GIB
        denoise = s_weights + s_opt + cfg * s_tokens * fam["samp"]
        decode = s * s * fam["dec"]
        if low and a["park"]:
            out["sampling"] = max(denoise, aux + s_opt + decode) + CONTEXT_GIB
        else:
            out["sampling"] = denoise + decode + CONTEXT_GIB
        out["_w_sampling"] = s_weights
    return out


# ---- the arch table -----------------------------------------------------------------------------

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
            "nominal": r["params"] == "nominal",
        })
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
    (r"^sd15", "sd1", "-"), (r"^lumina2", "lumina2", "-"), (r"^ltx2", "ltx2", "-"),
]

# The web UI's defaults where a report does not say (memory-reference §6).
UI_LOW_VRAM = {"wan22_14b", "qwen_image", "qwen_image_edit", "qwen_image_edit_plus", "flux2",
               "zimage", "ltx2", "flux2_klein_9b", "flux2_klein_4b"}
UI_NO_QUANT = {"lumina2", "sdxl", "sd1"}


def first_number(s):
    m = re.search(r"\d+(?:\.\d+)?", s or "")
    return float(m.group(0)) if m else None


def normalise(r, archs):
    """A point as settings, or (None, reason) when it stays out of the calibration."""
    pid, text = r["id"], " ".join(r.values()).lower()
    aitk = r["trainer"].startswith("aitk")
    if "regression" in r["evidence"].lower() or "after update" in r["outcome"].lower():
        return None, "regression (worked on an older commit)"
    if "spill" in r["outcome"].lower() or "shared-memory" in text:
        return None, "Windows shared-memory spill, not a VRAM point"
    if "host" in r["outcome"].lower():
        return None, "host-RAM kill, not a VRAM point"
    if "full" in r["rank"].lower() or "full fine-tune" in r["arch"].lower():
        return None, "full fine-tune (not calibrated)"
    if not aitk and (re.search(r"blocks_to_swap|block swap|\d+% (layer )?offload|offload_fraction",
                               r["quantize"] + r["text_encoder"], re.I) or
                     re.search(r"blocks_to_swap\s*=|--blocks_to_swap", r["quote"])):
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
    q = r["quantize"].lower()
    qm = re.match(r"\s*(unknown|ui default|none|uint\d\s*\+\s*ara|uint\d|qfloat8|float8|fp8|int8|"
                  r"8-bit|nf4|int2|int4)", q)
    word = qm.group(1) if qm else "unknown"
    if word in ("unknown", "ui default"):
        quantize = aitk and arch not in UI_NO_QUANT
        qtype = "qfloat8" if quantize else "bf16"
    elif word == "none":
        quantize, qtype = False, "bf16"
    else:
        quantize = True
        qtype = {"8-bit": "int8", "fp8": "float8"}.get(word, word.replace(" ", ""))
        if "ara" in qtype:
            qtype = qtype.split("+")[0] + "|ara"
    tem = re.search(r"te (qfloat8|float8|fp8|int8|nf4)", q)
    te_text = r["text_encoder"].lower()
    quantize_te = bool(tem) or ("quantized" in te_text) or quantize or "fp8" in te_text
    qtype_te = tem.group(1) if tem else "qfloat8"
    lv = r["low_vram"].lower()
    low_vram = lv.startswith("true") or (lv == "unknown" and aitk and arch in UI_LOW_VRAM)
    if lv.startswith("tested true and false"):
        low_vram = True
    res_text = r["resolution"].lower()
    nums = [float(x) for x in re.findall(r"\d+", res_text)]
    if "x" in res_text and len(nums) >= 2 and re.search(r"\d\s*x\s*\d", res_text):
        res = math.sqrt(nums[0] * nums[1])
    elif [n for n in nums if n >= 64] and "user" not in res_text:
        res = max(n for n in nums if n >= 64)
    elif "user" in res_text:
        res = nums[0] if nums else 512
    elif res_text in ("low",):
        res = 512
    else:
        res = 1024.0
    batch = first_number(r["batch_size"]) or 1
    gc = not r["grad_checkpointing"].lower().startswith("false")
    rk = r["rank"].lower()
    rank = first_number(rk) if re.match(r"\s*~?\d", rk) else (32 if arch.startswith("wan") and aitk
                                                              else 16)
    if re.match(r"\d+\s*-\s*\d+", rk):
        rank = max(float(x) for x in re.findall(r"\d+", rk))
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
    opt = r["optimizer"].lower()
    optimizer = ("adamw" if "adam8bit false" in opt else
                 opt.split()[0] if opt and not opt.startswith(("unknown", "preset")) else
                 "adamw8bit" if aitk else "adamw")
    if "unet only" in te_text or "not cached" in te_text:
        te_mode = "gpu"
    elif "cach" in te_text or "precomputed" in te_text or "freed" in te_text:
        te_mode = "cached"
    elif "unload" in te_text:
        te_mode = "unload"
    elif aitk or re.search(r"on gpu|kept|loaded|trained", te_text):
        te_mode = "gpu"
    else:
        te_mode = "cached"  # other trainers cache the text embeddings by default
    offload_tr = offload_te = None
    if aitk and "offloaded 100%" in te_text:
        offload_tr, offload_te = 0.0, 1.0
    card = r["card_vram_gb"].strip()
    card_gib = None
    if re.fullmatch(r"\d+", card):
        card_gib = CARD_TABLE.get(int(card), int(card) * 0.98)
    elif re.fullmatch(r"\d+-\d+", card):
        card_gib = CARD_TABLE.get(int(card.split("-")[0]))
    out = r["outcome"].lower()
    outcome = "fits" if out.startswith("fits") else "oom" if out.startswith("oom") else None
    weight = 0.5 if ("hedged" in out or "hedged" in r["evidence"].lower()) else 1.0
    pk = r["peak_gb"].lower()
    peak, peak_phase = None, "training"
    if "during te caching" in pk:
        peak, peak_phase = first_number(pk), "caching"
    elif outcome == "fits" and re.match(r"\s*[~>]?\d", pk):
        nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", pk.split("(")[0])]
        peak = sum(nums[:2]) / len(nums[:2]) if "-" in pk.split("(")[0] else nums[0]
        if pk.strip().startswith(">"):
            peak *= 1.04
    if (not aitk and peak_phase == "training" and r["resolution"] == "unknown" and
            r["batch_size"] == "unknown"):
        peak = None  # a training peak without its resolution or batch says nothing per token
        if card_gib is None:
            return None, "a peak without its resolution or batch"
    if outcome is None and peak is None:
        return None, "neither an outcome nor a peak"
    if not aitk and card_gib is None and peak is None:
        return None, "no card and no peak"
    sample = 1024 if aitk else 0
    p = {"id": pid, "arch": arch, "variant": variant, "aitk": aitk, "quantize": quantize,
         "qtype": qtype, "quantize_te": quantize_te, "qtype_te": qtype_te, "low_vram": low_vram,
         "offload_tr": offload_tr, "offload_te": offload_te, "res": float(round(res)),
         "batch": int(batch), "gc": gc, "rank": rank, "frames": frames, "optimizer": optimizer,
         "te_mode": te_mode, "card_gib": card_gib, "outcome": outcome, "peak": peak,
         "peak_phase": peak_phase, "weight": weight, "sample": sample}
    return p, None


def judged(phases, p):
    """The number a point's outcome is judged by: the peak over the phases for an AI Toolkit run
    (its loader is the one modelled), the training phase for another trainer's."""
    if p["aitk"]:
        return max(v for k, v in phases.items() if not k.startswith("_"))
    return phases["training"]


def judged_peak(phases, p):
    """The phase a reported peak is compared with, and the weights in it."""
    ph = p["peak_phase"]
    return phases[ph], phases["_w_" + ph]


# ---- the fit ------------------------------------------------------------------------------------

def family_coeffs(name, act):
    video = name in VIDEO_FAMILIES
    return {"act": act, "samp": act * SAMP_SHARE, "dec": VIDEO_DEC if video else IMAGE_DEC,
            "enc": VIDEO_ENC if video else IMAGE_ENC}


def score(points, archs, fam_name, act):
    fam = family_coeffs(fam_name, act)
    miss, errs = 0.0, []
    for p in points:
        a = find_arch(archs, p["arch"], p["variant"])
        ph = estimate(p, a, fam)
        v = judged(ph, p)
        if p["outcome"] and p["card_gib"]:
            if (v <= p["card_gib"]) != (p["outcome"] == "fits"):
                miss += p["weight"]
        if p["peak"] is not None:
            errs.append(abs(math.log(judged_peak(ph, p)[0] / p["peak"])))
    return miss, (statistics.mean(errs) if errs else 0.0)


def fit(points, archs, fam_name):
    best = None
    for i in range(161):
        act = 1e-5 * 10 ** (i / 40)  # 1e-5 .. 1e-1 GiB per token
        miss, err = score(points, archs, fam_name, act)
        key = (miss, err, abs(math.log(act / DEFAULT_ACT)))
        if best is None or key < best[0]:
            best = (key, act)
    return best[1]


def fmt(x):
    return "%.6g" % x


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
        if p:
            points.append(p)
        else:
            left_out.append((r["id"], r["arch"], why))

    families = []
    for a in archs:
        if a["family"] not in families:
            families.append(a["family"])
    coeffs, stats = {}, {}
    for fname in families:
        fp = [p for p in points if find_arch(archs, p["arch"], p["variant"])["family"] == fname]
        act = fit(fp, archs, fname) if fp else DEFAULT_ACT
        coeffs[fname] = family_coeffs(fname, act)
        rel, tot = [], []
        for p in fp:
            a = find_arch(archs, p["arch"], p["variant"])
            ph = estimate(p, a, coeffs[fname])
            p["pred"] = judged(ph, p)
            for k in ("model_load", "caching", "training", "sampling"):
                p["pred_" + k] = ph.get(k)
            if p["peak"] is not None:
                v, w = judged_peak(ph, p)
                p["pred_peak"] = v
                # The spread of the part that is not arithmetic: what is over the weights.
                if p["res"] <= 1280:  # a far bucket widens extrapolated answers only
                    rel.append((p["peak"] - v) / (v - w))
                tot.append((p["peak"] - v) / v)
        # The band: the spread of the peak residuals; with five or more, the most extreme one
        # on each side is left out (one odd report should not make every answer "tight").
        trimmed = sorted(rel)[1:-1] if len(rel) >= 5 else rel
        floor = 0.1 if len(rel) >= 3 else ROUGH_BAND  # one or two peaks show no spread
        lo = max(floor, min(0.6, -min(trimmed))) if trimmed else ROUGH_BAND
        hi = max(floor, min(0.6, max(trimmed))) if trimmed else ROUGH_BAND
        max_bucket = max((p["res"] for p in fp), default=1024.0)
        max_frames = max((p["frames"] for p in fp), default=1)
        stats[fname] = {"points": len(fp), "rel": rel, "tot": tot, "lo": lo, "hi": hi,
                        "max_bucket": max_bucket, "max_frames": max_frames}

    # The table the program compiles in.
    h = ["/* Generated by scripts/calibrate.py from data/arch-memory.tsv and data/fit-points.tsv."
         " Do not edit: change the data", " * and run the script (tests/estimate fails when this"
         " file and the data disagree). */", "",
         "static const struct est_arch est_archs[] = {"]
    enum_tr = {"gpu": "LT_GPU", "gpu_unless_low_vram": "LT_GPU_UNLESS_LOW_VRAM", "cpu": "LT_CPU"}
    enum_te = {"gpu_bf16": "LE_GPU_BF16", "cpu_quant": "LE_CPU_QUANT"}
    enum_wt = {"yes": "WT_YES", "no": "WT_NO", "unless_low_vram": "WT_UNLESS_LOW_VRAM",
               "te_first": "WT_TE_FIRST"}
    b = lambda x: "true" if x else "false"
    for a in archs:
        h.append('\t{ "%s", "%s", "%s", %s, %s, %d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, '
                 '%s, %s, %s },' % (
                     a["arch"], a["variant"], a["family"], fmt(a["tr_b"]), fmt(a["hidden"]),
                     a["experts"], fmt(a["te_b"]), fmt(a["aux_b"]), enum_tr[a["load_tr"]],
                     enum_te[a["load_te"]], enum_wt[a["tr_with_te"]], b(a["park"]),
                     b(a["one_expert"]), b(a["te_flag_quantize"]), b(a["te_qtype_te"]),
                     fmt(a["tok_px"]), fmt(a["tok_mult"]), fmt(a["frame_div"]), b(a["cfg"]),
                     b(a["nominal"])))
    h += ["};", "", "static const struct est_family est_families[] = {"]
    for fname in families:
        c, s = coeffs[fname], stats[fname]
        h.append('\t{ "%s", %s, %s, %s, %s, %s, %s, %d, %s, %s },' % (
            fname, fmt(c["act"]), fmt(c["samp"]), fmt(c["dec"]), fmt(c["enc"]), fmt(s["lo"]),
            fmt(s["hi"]), s["points"], fmt(s["max_bucket"]), fmt(s["max_frames"])))
    h += ["};", ""]
    table = "\n".join(h)

    cols = ["id", "arch", "variant", "aitk", "quantize", "qtype", "quantize_te", "qtype_te",
            "low_vram", "offload_te", "res", "batch", "gc", "rank", "frames", "optimizer",
            "te_mode", "sample", "card_gib", "outcome", "weight", "peak", "peak_phase", "pred",
            "pred_model_load", "pred_caching", "pred_training", "pred_sampling"]
    lines = ["\t".join(cols)]
    for p in points:
        vals = []
        for c in cols:
            v = p[c]
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif v is None:
                v = "-"
            elif isinstance(v, float):
                v = fmt(v)
            vals.append(str(v))
        lines.append("\t".join(vals))
    pts = "\n".join(lines) + "\n"

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
        print("%-5s %-22s %-8s %8s %8s %8s  %s" % ("id", "arch", "outcome", "card", "peak", "est",
                                                  "residual"))
        for p in points:
            res = ""
            if p["peak"] is not None:
                res = "%+.0f%%" % (100 * (p["peak"] - p["pred_peak"]) / p["pred_peak"])
            if p["outcome"] and p["card_gib"]:
                ok = (p["pred"] <= p["card_gib"]) == (p["outcome"] == "fits")
                res += (" " if res else "") + ("right" if ok else "WRONG")
            print("%-5s %-22s %-8s %8s %8s %8.1f  %s" % (
                p["id"], p["arch"] + ("" if p["variant"] == "-" else " " + p["variant"]),
                p["outcome"] or "-", fmt(p["card_gib"]) if p["card_gib"] else "-",
                fmt(p["peak"]) if p["peak"] is not None else "-",
                p["pred_peak"] if p["peak"] is not None else p["pred"], res))
        print()
        for pid, arch, why in left_out:
            print("left out %-5s %-30s %s" % (pid, arch, why))
        print()
    right = total = 0
    for p in points:
        if p["outcome"] and p["card_gib"]:
            total += 1
            right += (p["pred"] <= p["card_gib"]) == (p["outcome"] == "fits")
    print("%-8s %6s %6s %14s %8s %8s %8s" % ("family", "points", "peaks", "act GiB/token",
                                               "median", "worst", "band"))
    for fname in families:
        s = stats[fname]
        rel = [abs(x) for x in s["tot"]]
        print("%-8s %6d %6d %14s %7s %8s   -%d%%/+%d%%" % (
            fname, s["points"], len(rel), fmt(coeffs[fname]["act"]),
            ("%.0f%%" % (100 * statistics.median(rel))) if rel else "-",
            ("%.0f%%" % (100 * max(rel))) if rel else "-", round(100 * s["lo"]),
            round(100 * s["hi"])))
    print("classified right: %d of %d points with a card and an outcome; %d points used, %d left out"
          % (right, total, len(points), len(left_out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
