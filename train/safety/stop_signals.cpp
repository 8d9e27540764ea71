#include "train/safety/stop_signals.h"

#include <csignal>
#include <cstdio>

namespace nl {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
bool g_installed = false;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

void arm(int sig) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // the second signal takes the default action
  sigaction(sig, &sa, nullptr);
}

}  // namespace

void install_stop_signals() {
  arm(SIGINT);
  arm(SIGTERM);
  std::signal(SIGXFSZ, SIG_IGN);
  g_installed = true;
}

int stop_signal() { return g_stop_signal; }

void clear_stop_signal() {
  g_stop_signal = 0;
  if (g_installed) install_stop_signals();
}

const char* signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  static thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

}  // namespace nl
