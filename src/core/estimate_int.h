/* estimate_int.h — what the parts of the estimate share inside the core (not installed). */
#ifndef OOMFIX_ESTIMATE_INT_H
#define OOMFIX_ESTIMATE_INT_H

#include <stdint.h>

/* What PyTorch reports for a card sold as `sold` GB (GiB), 0 when the table has no such card. */
double est_sold_gib(double sold);

/* Bytes of `gib`, saturated at EST_BYTES_MAX; 0 for anything not above 0 (NaN included). */
int64_t est_gib_bytes(double gib);

#endif
