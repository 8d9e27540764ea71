// SIGINT (Ctrl-C) and SIGTERM (kill, a batch scheduler's notice) ask a training run to
// stop cleanly: the step in progress finishes, a checkpoint is saved, and the program
// exits with 128 + the signal's number. A second signal is not caught (the handler
// resets itself), so it stops the program at once; the checkpoint on disk stays whole
// because every write is atomic.
#pragma once

namespace nl {

// Installs the handlers (programs call it; the library never does). It also ignores
// SIGXFSZ, so that a file-size limit (ulimit -f) makes a write fail with EFBIG, which
// the run reports, instead of killing the process.
void install_stop_signals();

// The signal that asked the run to stop, 0 while none has.
int stop_signal();

// Forgets a received signal and, when the handlers were installed, re-arms them (for
// tests, which raise the signals in-process).
void clear_stop_signal();

// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int sig);

}  // namespace nl
