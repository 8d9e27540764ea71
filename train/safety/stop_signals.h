// SIGINT (Ctrl-C) and SIGTERM (kill, a batch scheduler's notice). While training steps
// run (inside a StopSignalWindow: the training loop, a grid waiting for its runs) a
// signal asks the run to stop cleanly: the step in progress finishes (or, where the task
// can put its batch back, is abandoned between blocks or graph nodes: autograd/interrupt.h;
// an evaluation stops between its batches), a checkpoint of the last whole step is saved,
// and the program exits with 128 + the signal's number. A second signal is not
// caught (the handler resets itself), so it stops the program at once; the checkpoint
// on disk stays whole because every write is atomic.
// Outside such a window (flags, loading data, reading a checkpoint, the evaluation and
// sample at the end) there is nothing to save: the signal ends the program at once,
// exit code 128 + signal, with one line
//   train_gpt: stopped by SIGTERM before the first training step (no checkpoint was written by this run)
// whose tail is the note of the phase (set_stop_note).
#pragma once
#include <string>
#include <vector>

namespace nl {

// Installs the handlers (programs call it first thing; the library never does);
// `program` starts the line printed on an immediate stop and `note` ends it until
// set_stop_note changes it (a string literal). It also ignores SIGXFSZ, so that a
// file-size limit (ulimit -f) makes a write fail with EFBIG, which the run reports,
// instead of killing the process.
void install_stop_signals(const char* program, const char* note = "while no training step was running");

// While one exists, a signal is held for the code that polls stop_signal() instead of
// ending the program. Windows do not nest.
class StopSignalWindow {
 public:
  StopSignalWindow();
  ~StopSignalWindow();
  StopSignalWindow(const StopSignalWindow&) = delete;
  StopSignalWindow& operator=(const StopSignalWindow&) = delete;
};

// What the line of an immediate stop says after the signal's name; `note` must live as
// long as the program (a string literal).
void set_stop_note(const char* note);

// What a signal that ends the program at once removes first, so that a run stopped while
// it is set up leaves nothing behind: a run folder's lock file and the folders made for
// it, deepest first (rmdir: only while empty). Copies the paths (at most 8 folders of
// 4095 bytes; longer ones are not removed). clear_stop_cleanup: nothing to remove.
void set_stop_cleanup(const std::string& file, const std::vector<std::string>& folders);
void clear_stop_cleanup();

// The signal that asked the run to stop, 0 while none has.
int stop_signal();

// Forgets a received signal and, when the handlers were installed, re-arms them (for
// tests, which raise the signals in-process).
void clear_stop_signal();

// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int sig);

}  // namespace nl
