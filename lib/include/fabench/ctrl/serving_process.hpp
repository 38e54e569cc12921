// ServingProcess: serves each Channel handed to it in a child process of its
// own, forked from a process that never had a second thread.
//
// Why: once a process has had a second thread, glibc takes its cancellable
// path for every system call, and the kernel looks its files up with a
// reference count; a child forked from it keeps the first. A software RDMA
// provider (rxe) makes one system call per post, so a timed loop in such a
// process is slower (docs/design/perftest-parity.md, "Single-threaded ends"). A
// pair server needs threads (handshakes beside the client it serves, "busy"
// told at once), so its clients are served elsewhere:
//  - the constructor forks a *spawner* (call it while this process has one
//    thread); the spawner only waits for channels, each a connected socket
//    passed with SCM_RIGHTS over a socketpair with its peer's name;
//  - per channel it forks a child that runs `body` on it and exits with
//    body's return value (1 when body throws), waits for that child and
//    reports how it ended;
//  - the child is one thread with a file table of its own; whatever it
//    opened (an ibv_context, its QPs, its pinned memory) is released by the
//    kernel when it exits, even when it crashed.
// The spawner and every child die with their parent (PR_SET_PDEATHSIG,
// SIGKILL), so nothing outlives the server; destroying the ServingProcess
// ends the spawner (and a child still serving).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "fabench/ctrl/channel.hpp"

namespace fabench::ctrl {

class ServingProcess {
 public:
  // Runs in the child, on the handed channel (non-blocking, its peer named as
  // in the parent); its return value is the child's exit status.
  using Body = std::function<int(Channel&)>;

  // How a child ended.
  struct Outcome {
    enum class Kind : int { kExited, kSignaled, kNotStarted };
    Kind kind = Kind::kExited;
    int code = 0;  // the exit status, the signal, or the errno of the failed fork
    pid_t pid = -1;
    [[nodiscard]] bool clean() const noexcept { return kind == Kind::kExited; }
    // "exited with status 1", "was killed by signal 11 (Segmentation fault)",
    // "could not be started: fork: Resource temporarily unavailable".
    [[nodiscard]] std::string describe() const;
  };

  // Forks the spawner (throws CtrlError when the socketpair or fork fails).
  explicit ServingProcess(Body body);
  ~ServingProcess();
  ServingProcess(const ServingProcess&) = delete;
  ServingProcess& operator=(const ServingProcess&) = delete;

  // Hands `ch` to a new child and returns once that child has exited. `ch`
  // stays open here, untouched while the child serves it, so that the caller
  // can tell the peer why a child that crashed is gone. Throws CtrlError
  // kClosed, naming the spawner's pid, when the spawner is gone.
  Outcome serve(const Channel& ch);

  [[nodiscard]] pid_t pid() const noexcept { return spawner_; }

 private:
  int socket_ = -1;  // our end of the socketpair
  pid_t spawner_ = -1;
};

}  // namespace fabench::ctrl
