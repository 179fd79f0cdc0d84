"""Builds AI Toolkit web UI databases the way its ORM creates them, for the aitk tests.

The schema is what `prisma db push` makes from ui/prisma/schema.prisma (ostris/ai-toolkit):
column types and defaults, the unique index Job_name_key, DateTime columns holding integer
milliseconds since the epoch (what the ORM's SQLite connector writes).
"""
import json
import os
import sqlite3
import time
import uuid

SCHEMA = """
CREATE TABLE "Settings" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL
);
CREATE TABLE "Queue" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "gpu_ids" TEXT NOT NULL,
    "is_running" BOOLEAN NOT NULL DEFAULT false
);
CREATE TABLE "Job" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "gpu_ids" TEXT NOT NULL,
    "job_config" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'stopped',
    "stop" BOOLEAN NOT NULL DEFAULT false,
    "return_to_queue" BOOLEAN NOT NULL DEFAULT false,
    "step" INTEGER NOT NULL DEFAULT 0,
    "total_steps" INTEGER,
    "info" TEXT NOT NULL DEFAULT '',
    "speed_string" TEXT NOT NULL DEFAULT '',
    "queue_position" INTEGER NOT NULL DEFAULT 0,
    "pid" INTEGER,
    "job_type" TEXT NOT NULL DEFAULT 'train',
    "job_ref" TEXT,
    "save_now" BOOLEAN NOT NULL DEFAULT false,
    "sample_now" BOOLEAN NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX "Settings_key_key" ON "Settings"("key");
CREATE UNIQUE INDEX "Queue_gpu_ids_key" ON "Queue"("gpu_ids");
CREATE INDEX "Queue_gpu_ids_idx" ON "Queue"("gpu_ids");
CREATE UNIQUE INDEX "Job_name_key" ON "Job"("name");
CREATE INDEX "Job_status_idx" ON "Job"("status");
CREATE INDEX "Job_gpu_ids_idx" ON "Job"("gpu_ids");
CREATE INDEX "Job_job_type_idx" ON "Job"("job_type");
CREATE INDEX "Job_job_ref_idx" ON "Job"("job_ref");
"""


def job_config(name, training_folder, batch=4, resolution=(512, 768, 1024)):
    """A job as the UI's editor saves it (JSON.stringify: compact, one line)."""
    cfg = {
        "job": "extension",
        "config": {
            "name": name,
            "process": [{
                "type": "diffusion_trainer",
                "training_folder": training_folder,
                "sqlite_db_path": "./aitk_db.db",
                "device": "cuda",
                "trigger_word": None,
                "performance_log_every": 10,
                "network": {"type": "lora", "linear": 32, "linear_alpha": 32},
                "save": {"dtype": "bf16", "save_every": 250, "max_step_saves_to_keep": 4},
                "datasets": [{"folder_path": "/data/set", "caption_ext": "txt",
                              "resolution": list(resolution), "batch_size": 1,
                              "cache_latents_to_disk": True}],
                "train": {"batch_size": batch, "steps": 3000, "gradient_accumulation": 1,
                          "train_unet": True, "train_text_encoder": False,
                          "gradient_checkpointing": True, "noise_scheduler": "flowmatch",
                          "optimizer": "adamw8bit", "lr": 0.0001, "dtype": "bf16",
                          "ema_config": {"use_ema": False, "ema_decay": 0.99}},
                "model": {"name_or_path": "black-forest-labs/FLUX.1-dev", "arch": "flux",
                          "quantize": True, "qtype": "qfloat8", "low_vram": False},
                "sample": {"sampler": "flowmatch", "sample_every": 250, "width": 1024,
                           "height": 1024, "prompts": ["a photo, \"quoted\" and ünïcode"],
                           "neg": "", "seed": 42, "guidance_scale": 4, "sample_steps": 25},
            }],
        },
        "meta": {"name": "[name]", "version": "1.0"},
    }
    return json.dumps(cfg, separators=(",", ":"), ensure_ascii=False)


def create(root, mode="wal", jobs=(), training_folder=None):
    """Creates root/aitk_db.db in `mode` ('wal' or 'delete') with `jobs`: dicts with name and
    optional status, step, total_steps, info, job_config, updated_at (ms or text)."""
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, "aitk_db.db")
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=%s" % mode)
    con.executescript(SCHEMA)
    tf = training_folder or os.path.join(root, "output")
    if training_folder:
        con.execute("INSERT INTO Settings (key, value) VALUES ('TRAINING_FOLDER', ?)", (tf,))
    now = int(time.time() * 1000)
    for j in jobs:
        add_job(con, j, tf, now)
    con.commit()
    con.close()
    return path


def add_job(con, j, tf, now=None):
    now = now or int(time.time() * 1000)
    name = j["name"]
    con.execute(
        "INSERT INTO Job (id, name, gpu_ids, job_config, created_at, updated_at, status, step,"
        " total_steps, info) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (str(uuid.uuid4()), name, j.get("gpu_ids", "0"),
         j.get("job_config") or job_config(name, tf, **j.get("cfg", {})),
         now - 60000, j.get("updated_at", now - 1000), j.get("status", "error"),
         j.get("step", 0), j.get("total_steps", 3000), j.get("info", "")))


def row(path, name):
    con = sqlite3.connect(path, timeout=30)
    con.row_factory = sqlite3.Row
    r = con.execute("SELECT *, typeof(updated_at) AS ut FROM Job WHERE name=?", (name,)).fetchone()
    con.close()
    return dict(r) if r else None
