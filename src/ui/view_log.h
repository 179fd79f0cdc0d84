/* view_log.h — the Log view's helpers in files of their own. */
#ifndef OOMFIX_UI_VIEW_LOG_H
#define OOMFIX_UI_VIEW_LOG_H

#include <stdbool.h>

#include "view.h"

/* R (log_runs.c): shows the job's next earlier run (a web UI job's logs/<n>_log.txt, a job
 * file's JOB.oomfix-runs/<n>.log), newest first, back to the newest after the oldest, and says
 * in the status line which it is and what was saved after it. True when the log on screen was
 * replaced (the view then starts it from the top); false with the reason said. */
bool ui_log_next_run(const struct ui_env *v);

#endif
