/* logidx.c — placeholder until the module lands. */
