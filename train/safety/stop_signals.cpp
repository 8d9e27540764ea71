#include "train/safety/stop_signals.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>

namespace nl {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_deferring = 0;
const char* volatile g_note = "";
char g_program[64] = "";
bool g_installed = false;
// set_stop_cleanup's paths; g_cleanup_count is set last, so the handler never reads a
// half-copied path
constexpr size_t kCleanupPath = 4096, kCleanupFolders = 8;
char g_cleanup_file[kCleanupPath] = "";
char g_cleanup_folders[kCleanupFolders][kCleanupPath];
volatile std::sig_atomic_t g_cleanup_count = 0, g_cleanup_armed = 0;

void write_text(const char* s) {
  for (size_t n = strlen(s); n > 0;) {
    const ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

// Only async-signal-safe calls here: write and _exit.
extern "C" void on_stop_signal(int sig) {
  if (g_deferring) {
    g_stop_signal = sig;
    return;
  }
  if (g_cleanup_armed) {  // unlink and rmdir are async-signal-safe
    unlink(g_cleanup_file);
    for (int i = 0; i < (int)g_cleanup_count; ++i) rmdir(g_cleanup_folders[i]);
  }
  write_text(g_program);
  write_text(": stopped by ");
  write_text(sig == SIGINT ? "SIGINT " : sig == SIGTERM ? "SIGTERM " : "a signal ");
  write_text(g_note);
  write_text("\n");
  _exit(128 + sig);
}

void arm(int sig) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // the second signal takes the default action
  sigaction(sig, &sa, nullptr);
}

void arm_all() {
  arm(SIGINT);
  arm(SIGTERM);
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace

void install_stop_signals(const char* program, const char* note) {
  std::snprintf(g_program, sizeof g_program, "%s", program);
  g_note = note;
  arm_all();
  g_installed = true;
}

StopSignalWindow::StopSignalWindow() { g_deferring = 1; }
StopSignalWindow::~StopSignalWindow() { g_deferring = 0; }

void set_stop_note(const char* note) { g_note = note; }

void set_stop_cleanup(const std::string& file, const std::vector<std::string>& folders) {
  g_cleanup_armed = 0;
  g_cleanup_count = 0;
  if (file.size() >= kCleanupPath) return;
  std::memcpy(g_cleanup_file, file.c_str(), file.size() + 1);
  int n = 0;
  for (const std::string& f : folders) {
    if (f.size() >= kCleanupPath || n == (int)kCleanupFolders) break;  // the rest stays: rmdir goes deepest first
    std::memcpy(g_cleanup_folders[n++], f.c_str(), f.size() + 1);
  }
  g_cleanup_count = n;
  g_cleanup_armed = 1;
}

void clear_stop_cleanup() { g_cleanup_armed = 0; }

int stop_signal() { return g_stop_signal; }

void clear_stop_signal() {
  g_stop_signal = 0;
  if (g_installed) arm_all();
}

const char* signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  static thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

}  // namespace nl
