/* fix.c — placeholder until the module lands. */
