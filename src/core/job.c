/* job.c — placeholder until the module lands. */
