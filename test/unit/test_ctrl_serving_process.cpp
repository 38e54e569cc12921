// ctrl::ServingProcess: a channel handed to a child process of its own (one
// thread, the peer's name kept), how each child ended, and the spawner's end.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "ctrl_support.hpp"
#include "fabench/ctrl/serving_process.hpp"

using namespace fabench::ctrl;
using fabench::test::catch_ctrl;
using fabench::test::connect_pair;
using namespace std::chrono_literals;

namespace {

// "Threads:" of /proc/self/status.
int own_threads() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// The child's answer to a Barrier: "pid P threads T as DESCRIBE".
int answer(Channel& ch) {
  const Message m = ch.recv(2s);
  if (!std::holds_alternative<Barrier>(m)) return 3;
  ch.send(Error{"pid " + std::to_string(::getpid()) + " threads " + std::to_string(own_threads()) + " as " +
                ch.describe()});
  return static_cast<int>(std::get<Barrier>(m).epoch);
}

std::string text_of(const Message& m) {
  REQUIRE(std::holds_alternative<Error>(m));
  return std::get<Error>(m).text;
}

}  // namespace

TEST_CASE("a ServingProcess serves a handed channel in a one-thread child that knows its peer",
          "[ctrl][serving_process]") {
  ServingProcess processes(answer);
  // This process has a second thread while it hands the channel over: the
  // child, forked from the spawner, has one all the same.
  std::jthread idle([](const std::stop_token& st) {
    while (!st.stop_requested()) std::this_thread::sleep_for(10ms);
  });
  REQUIRE(processes.pid() > 0);
  auto [client, server] = connect_pair();
  server.set_peer(3, "host-b");
  client.send(Barrier{7});  // waits in the socket for the child
  const auto out = processes.serve(server);
  CHECK(out.kind == ServingProcess::Outcome::Kind::kExited);
  CHECK(out.code == 7);
  CHECK(out.clean());
  CHECK(out.describe() == "exited with status 7");
  const std::string said = text_of(client.recv(2s));
  CHECK_THAT(said,
             Catch::StartsWith("pid " + std::to_string(out.pid) + " threads 1 as peer rank 3 (host-b 127.0.0.1:"));
  CHECK(out.pid != ::getpid());
  CHECK(out.pid != processes.pid());
  // The channel is still open here: the parent can tell its peer more.
  server.send(Error{"still here"}, 1s);
  CHECK(text_of(client.recv(2s)) == "still here");

  // The next channel gets a new child.
  auto second = connect_pair();
  second.client.send(Barrier{0});
  const auto out2 = processes.serve(second.server);
  CHECK(out2.clean());
  CHECK(out2.code == 0);
  CHECK(out2.pid != out.pid);
  CHECK_THAT(text_of(second.client.recv(2s)), Catch::StartsWith("pid " + std::to_string(out2.pid) + " threads 1"));
}

TEST_CASE("a ServingProcess reports a child that threw, one that was killed, and serves on",
          "[ctrl][serving_process]") {
  ServingProcess processes([](Channel& ch) -> int {
    const Message m = ch.recv(2s);
    const auto epoch = std::get<Barrier>(m).epoch;
    if (epoch == 1) throw std::runtime_error("thrown in the child");
    if (epoch == 2) ::kill(::getpid(), SIGKILL);
    return 0;
  });
  auto threw = connect_pair();
  threw.client.send(Barrier{1});
  const auto a = processes.serve(threw.server);
  CHECK(a.kind == ServingProcess::Outcome::Kind::kExited);
  CHECK(a.code == 1);
  CHECK(a.describe() == "exited with status 1");

  auto killed = connect_pair();
  killed.client.send(Barrier{2});
  const auto b = processes.serve(killed.server);
  CHECK(b.kind == ServingProcess::Outcome::Kind::kSignaled);
  CHECK(b.code == SIGKILL);
  CHECK_FALSE(b.clean());
  CHECK(b.describe() == "was killed by signal 9 (Killed)");

  auto fine = connect_pair();
  fine.client.send(Barrier{3});
  const auto c = processes.serve(fine.server);
  CHECK(c.clean());
  CHECK(c.code == 0);
}

TEST_CASE("a ServingProcess whose spawner is gone says so; destroying one ends its spawner",
          "[ctrl][serving_process]") {
  pid_t spawner = -1;
  {
    ServingProcess processes([](Channel&) { return 0; });
    spawner = processes.pid();
    REQUIRE(::kill(spawner, SIGKILL) == 0);
    std::this_thread::sleep_for(100ms);
    auto pair = connect_pair();
    const auto e = catch_ctrl([&] { (void)processes.serve(pair.server); });
    CHECK(e.kind() == CtrlError::Kind::kClosed);
    CHECK_THAT(e.what(), Catch::StartsWith("the serving process (pid " + std::to_string(spawner) +
                                           ") is gone: killed by signal 9 (Killed)"));
  }
  {
    ServingProcess processes([](Channel&) { return 0; });
    spawner = processes.pid();
  }
  // Reaped by the destructor: no such process any more.
  errno = 0;
  CHECK(::kill(spawner, 0) == -1);
  CHECK(errno == ESRCH);
}
