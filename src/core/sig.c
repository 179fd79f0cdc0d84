/* sig.c — placeholder until the module lands. */
