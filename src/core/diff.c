/* diff.c — placeholder until the module lands. */
