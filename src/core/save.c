/* save.c — placeholder until the module lands. */
