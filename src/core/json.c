/* json.c — placeholder until the module lands. */
