#include "autograd/interrupt.h"

#include <atomic>

namespace nl {
namespace {

std::atomic<bool (*)()> g_poll{nullptr};

}  // namespace

InterruptPoll::InterruptPoll(bool (*poll)()) : previous_(g_poll.exchange(poll)) {}

InterruptPoll::~InterruptPoll() { g_poll.store(previous_); }

void poll_interrupt() {
  bool (*poll)() = g_poll.load(std::memory_order_relaxed);
  if (poll && poll()) throw Interrupted();
}

bool interrupt_polling() { return g_poll.load(std::memory_order_relaxed) != nullptr; }

}  // namespace nl
