#include "comm/bounded_call.h"

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace pipesched::runtime {

BoundedCall callWithin(std::chrono::milliseconds limit, std::function<void()> work) {
  // Shared with the thread, which may outlive this call.
  struct State {
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    BoundedCall result{BoundedCall::Outcome::Returned, ""};
  };
  auto state = std::make_shared<State>();
  try {
    std::thread([state, work = std::move(work)] {
      BoundedCall result{BoundedCall::Outcome::Returned, ""};
      try {
        work();
      } catch (const std::exception &e) {
        result = {BoundedCall::Outcome::Threw, e.what()};
      } catch (...) {
        result = {BoundedCall::Outcome::Threw,
                  "an exception that is not a std::exception"};
      }
      std::lock_guard<std::mutex> lock(state->mutex);
      state->result = result;
      state->finished = true;
      state->done.notify_all();
    }).detach();
  } catch (const std::system_error &e) {
    return {BoundedCall::Outcome::Threw,
            std::string("cannot start a thread: ") + e.what()};
  }
  std::unique_lock<std::mutex> lock(state->mutex);
  if (!state->done.wait_for(lock, limit, [&] { return state->finished; }))
    return {BoundedCall::Outcome::TimedOut, ""};
  return state->result;
}

} // namespace pipesched::runtime
