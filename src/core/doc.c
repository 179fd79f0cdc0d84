/* doc.c — placeholder until the module lands. */
