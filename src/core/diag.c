/* diag.c — placeholder until the module lands. */
