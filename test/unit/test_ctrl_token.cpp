// The shared token (ctrl/token.hpp): SHA-256 and HMAC-SHA256 against their
// published test vectors, where the token comes from, and the challenge-
// response of the Hello exchange with the right, a wrong or a missing token
// on either end, over a socketpair and in a Bootstrap rendezvous.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ctrl_support.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/ctrl/hmac.hpp"
#include "fabench/ctrl/token.hpp"

using namespace fabench::ctrl;
using fabench::test::catch_ctrl;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;

namespace {

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

std::string hex(std::span<const std::uint8_t> b) {
  std::string out;
  for (auto v : b) out += fmt::format("{:02x}", v);
  return out;
}

struct Ends {
  Channel connecting;
  Channel accepting;
};

Ends socket_pair() {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  return Ends{Channel(sv[0]), Channel(sv[1])};
}

// The outcome of one end's exchange_hello: the peer's Hello, or the error.
struct Outcome {
  std::optional<Hello> peer;
  std::optional<CtrlError> error;
  [[nodiscard]] std::string what() const { return error ? error->what() : std::string(); }
};

Outcome hello_as(Channel& ch, const std::string& host, const std::string& token, bool accepting,
                 std::chrono::milliseconds timeout = 2s) {
  try {
    return Outcome{
        ch.exchange_hello(Hello{kProtocolVersion, "0.1.0", host, 0, 0}, timeout, Credentials{token, accepting}),
        std::nullopt};
  } catch (const CtrlError& e) {
    return Outcome{std::nullopt, e};
  }
}

// Both ends at once: {connecting end's outcome, accepting end's}.
std::pair<Outcome, Outcome> handshake(const std::string& client_token, const std::string& server_token) {
  auto [client, server] = socket_pair();
  auto server_side = std::async(std::launch::async,
                                [&, &server = server] { return hello_as(server, "server-host", server_token, true); });
  Outcome c = hello_as(client, "client-host", client_token, false);
  return {c, server_side.get()};
}

using fabench::test::env_of;

// A file that is removed again when the test ends.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& contents)
      : path(std::filesystem::temp_directory_path() /
             fmt::format("fabench-token-{}-{}", ::getpid(), Clock::now().time_since_epoch().count())) {
    std::ofstream(path, std::ios::binary) << contents;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("SHA-256 matches the FIPS 180-4 examples", "[ctrl][token]") {
  CHECK(hex(sha256(text("abc"))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex(sha256(text(""))) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex(sha256(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(
      hex(sha256(text("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                      "mnopqrstnopqrstu"))) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(hex(sha256(Bytes(1'000'000, 'a'))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 fed in pieces equals SHA-256 of the whole", "[ctrl][token]") {
  // Lengths around the padding boundaries (55, 56, 63, 64 bytes) and several blocks.
  for (std::size_t len : {0U, 1U, 55U, 56U, 57U, 63U, 64U, 65U, 119U, 120U, 128U, 200U}) {
    Bytes data(len);
    for (std::size_t i = 0; i < len; ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
    const auto whole = sha256(data);
    for (std::size_t cut = 0; cut <= len; cut += (len / 7) + 1) {
      INFO("length " << len << ", cut at " << cut);
      Sha256 h;
      h.update(std::span(data).first(cut));
      h.update(std::span(data).subspan(cut));
      CHECK(h.finish() == whole);
    }
  }
}

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[ctrl][token]") {
  CHECK(hex(hmac_sha256(Bytes(20, 0x0b), text("Hi There"))) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hex(hmac_sha256(text("Jefe"), text("what do ya want for nothing?"))) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hex(hmac_sha256(Bytes(20, 0xaa), Bytes(50, 0xdd))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  Bytes key25(25);
  for (std::size_t i = 0; i < key25.size(); ++i) key25[i] = static_cast<std::uint8_t>(i + 1);
  CHECK(hex(hmac_sha256(key25, Bytes(50, 0xcd))) == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Test case 5 compares the first 128 bits only.
  CHECK(hex(hmac_sha256(Bytes(20, 0x0c), text("Test With Truncation"))).substr(0, 32) ==
        "a3b6167473100ee06e0c796c2955552b");
  // Keys longer than a block are hashed first.
  CHECK(hex(hmac_sha256(Bytes(131, 0xaa), text("Test Using Larger Than Block-Size Key - Hash Key First"))) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(hex(hmac_sha256(Bytes(131, 0xaa),
                        text("This is a test using a larger than block-size key and a larger than block-size data. "
                             "The key needs to be hashed before being used by the HMAC algorithm."))) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("equal_constant_time compares contents and lengths", "[ctrl][token]") {
  const Bytes a{1, 2, 3, 4};
  CHECK(equal_constant_time(a, Bytes{1, 2, 3, 4}));
  CHECK_FALSE(equal_constant_time(a, Bytes{1, 2, 3, 5}));
  CHECK_FALSE(equal_constant_time(a, Bytes{0, 2, 3, 4}));
  CHECK_FALSE(equal_constant_time(a, Bytes{1, 2, 3}));
  CHECK(equal_constant_time(Bytes{}, Bytes{}));
}

TEST_CASE("the token comes from --token, --token-file or FABENCH_TOKEN", "[ctrl][token]") {
  const auto env = env_of({{"FABENCH_TOKEN", "from-env"}});
  CHECK(resolve_token(std::nullopt, std::nullopt, env_of({})).empty());
  CHECK(resolve_token(std::nullopt, std::nullopt, env_of({{"FABENCH_TOKEN", ""}})).empty());
  CHECK(resolve_token(std::nullopt, std::nullopt, env) == "from-env");
  CHECK(resolve_token(std::string("from-flag"), std::nullopt, env) == "from-flag");
  {
    const TempFile f("s3cret with spaces\n");
    CHECK(resolve_token(std::nullopt, f.path.string(), env) == "s3cret with spaces");
  }
  {
    const TempFile f("windows\r\n");
    CHECK(resolve_token(std::nullopt, f.path.string(), env) == "windows");
  }
  {
    const TempFile f("no newline");
    CHECK(resolve_token(std::nullopt, f.path.string(), env) == "no newline");
  }
}

TEST_CASE("a bad token source is one line naming it", "[ctrl][token]") {
  const auto env = env_of({});
  auto error_of = [&](const std::optional<std::string>& flag, const std::optional<std::string>& file) {
    const auto e = catch_ctrl([&] { (void)resolve_token(flag, file, env); });
    CHECK(e.kind() == CtrlError::Kind::kConfig);
    return std::string(e.what());
  };
  CHECK(error_of(std::string("a"), std::string("b")) ==
        "--token and --token-file contradict each other: give the token one way");
  CHECK(error_of(std::string(), std::nullopt) == "--token is empty");
  CHECK(error_of(std::nullopt, std::string("/nonexistent/fabench-token")) ==
        "--token-file /nonexistent/fabench-token: No such file or directory");
  {
    const TempFile f("\n");
    CHECK(error_of(std::nullopt, f.path.string()) == "--token-file " + f.path.string() + ": the file holds no token");
  }
  {
    const TempFile f(std::string(kMaxTokenFileBytes + 1, 'x'));
    CHECK_THAT(error_of(std::nullopt, f.path.string()),
               Catch::EndsWith("larger than 4096 bytes; is it the token file?"));
  }
  CHECK_THAT(error_of(std::nullopt, std::filesystem::temp_directory_path().string()),
             Catch::EndsWith(": Is a directory"));
}

TEST_CASE("nonces are fresh", "[ctrl][token]") {
  const auto a = random_nonce();
  const auto b = random_nonce();
  CHECK(a != b);
}

TEST_CASE("the same token on both ends passes; neither end holding one passes", "[ctrl][token]") {
  SECTION("same token") {
    const auto [client, server] = handshake("s3cret", "s3cret");
    CHECK(client.what().empty());
    CHECK(server.what().empty());
    REQUIRE(client.peer);
    REQUIRE(server.peer);
    CHECK(client.peer->host_name == "server-host");
    CHECK(server.peer->host_name == "client-host");
    CHECK(client.peer->challenge.size() == kTokenNonceBytes);
    CHECK(server.peer->challenge.size() == kTokenNonceBytes);
    CHECK(client.peer->challenge != server.peer->challenge);
  }
  SECTION("no token anywhere: the Hello exchange as before") {
    const auto [client, server] = handshake("", "");
    CHECK(client.what().empty());
    CHECK(server.what().empty());
    REQUIRE(client.peer);
    CHECK(client.peer->challenge.empty());
  }
}

TEST_CASE("a wrong or missing token fails on both ends with one line each", "[ctrl][token]") {
  const std::string hint = "--token-file, --token or FABENCH_TOKEN";
  SECTION("another token") {
    const auto [client, server] = handshake("wrong", "s3cret");
    REQUIRE(client.error);
    REQUIRE(server.error);
    CHECK(client.error->kind() == CtrlError::Kind::kAuth);
    CHECK(server.error->kind() == CtrlError::Kind::kAuth);
    CHECK(client.what() ==
          "token mismatch: peer server-host (local socket) holds another token (check " + hint + " on both ends)");
    CHECK(server.what() ==
          "token mismatch: peer client-host (local socket) holds another token (check " + hint + " on both ends)");
  }
  SECTION("the client holds none") {
    const auto [client, server] = handshake("", "s3cret");
    CHECK(client.what() ==
          "peer server-host (local socket) requires a token; give this end the same one (" + hint + ")");
    CHECK(server.what() ==
          "peer client-host (local socket) holds no token, but this end requires one; give it the "
          "same token (" +
              hint + ")");
    CHECK(client.error->kind() == CtrlError::Kind::kAuth);
    CHECK(server.error->kind() == CtrlError::Kind::kAuth);
  }
  SECTION("the server holds none") {
    const auto [client, server] = handshake("s3cret", "");
    CHECK(client.what() ==
          "peer server-host (local socket) holds no token, so it serves any host that reaches it; "
          "give it the same token, or run this end without one");
    CHECK(server.what() ==
          "peer client-host (local socket) holds a token, but this end has none; give this end the "
          "same token (" +
              hint + ")");
  }
}

TEST_CASE("the token never crosses the wire, and a proof is good for one connection only", "[ctrl][token]") {
  const std::string token = "correct horse battery staple";
  auto [client, server] = socket_pair();
  // Play the accepting end by hand, keeping every byte the client sends.
  auto client_side = std::async(std::launch::async,
                                [&, &client = client] { return hello_as(client, "client-host", token, false); });
  Hello mine{kProtocolVersion, "0.1.0", "server-host", 0, 0};
  const auto nonce = random_nonce();
  mine.challenge.assign(nonce.begin(), nonce.end());
  server.send(mine, 2s);
  const Hello theirs = std::get<Hello>(server.recv(2s));
  const Proof proof = std::get<Proof>(server.recv(2s));
  Bytes wire = encode(theirs);
  const Bytes proof_frame = encode(proof);
  wire.insert(wire.end(), proof_frame.begin(), proof_frame.end());
  CHECK(std::search(wire.begin(), wire.end(), token.begin(), token.end()) == wire.end());
  CHECK(proof == make_proof(token, false, theirs, mine));
  CHECK_FALSE(proof == make_proof(token, true, theirs, mine));  // the roles' proofs differ
  // Our answer, made with another token, is refused by the client.
  server.send(make_proof("another token", true, theirs, mine), 2s);
  const Outcome out = client_side.get();
  CHECK_THAT(out.what(), Catch::StartsWith("token mismatch: peer server-host"));

  // Replayed on a new connection (fresh nonces), that proof is refused.
  auto [client2, server2] = socket_pair();
  auto server_side = std::async(std::launch::async,
                                [&, &server2 = server2] { return hello_as(server2, "server-host", token, true); });
  (void)std::get<Hello>(client2.recv(2s));
  client2.send(theirs, 2s);  // the same Hello, challenge and all
  client2.send(proof, 2s);
  const Outcome refused = server_side.get();
  CHECK_THAT(refused.what(), Catch::StartsWith("token mismatch: peer client-host"));
  // The accepting end answers a wrong proof with a refusal, never its own proof.
  const Message answer = client2.recv(2s);
  REQUIRE(std::holds_alternative<Error>(answer));
  CHECK(std::get<Error>(answer).text == "token mismatch");
}

TEST_CASE("a peer that goes silent during the token check is bounded by the handshake timeout", "[ctrl][token]") {
  auto [client, server] = socket_pair();
  const auto t0 = Clock::now();
  auto server_side = std::async(
      std::launch::async, [&, &server = server] { return hello_as(server, "server-host", "s3cret", true, 400ms); });
  (void)std::get<Hello>(client.recv(2s));
  Hello h{kProtocolVersion, "0.1.0", "client-host", 0, 0, Bytes(kTokenNonceBytes, 7)};
  client.send(h, 2s);  // ... and no Proof
  const Outcome out = server_side.get();
  CHECK(out.error->kind() == CtrlError::Kind::kTimeout);
  CHECK_THAT(out.what(), Catch::EndsWith("during the token check"));
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 1.5);
}

TEST_CASE("a rendezvous with a token: a rank with another token cannot join", "[ctrl][token][bootstrap]") {
  const std::uint16_t port = [] {
    auto l = Listener::bind("127.0.0.1", 0);
    return l.port();
  }();
  auto config = [&](std::uint32_t rank, const std::string& token) {
    BootstrapOptions o;
    o.rank = rank;
    o.size = 3;
    o.master_addr = "127.0.0.1";
    o.master_port = port;
    o.timeout = 5s;
    o.host_name = "host-" + std::to_string(rank);
    return resolve_bootstrap_config(o, env_of({{"FABENCH_TOKEN", token}}));
  };
  std::vector<std::string> hosts;
  auto root = std::async(std::launch::async, [&] {
    auto b = Bootstrap::connect(config(0, "world-token"));
    hosts = b.hosts();
    b.barrier();
  });
  auto rank1 = std::async(std::launch::async, [&] {
    auto b = Bootstrap::connect(config(1, "world-token"));
    b.barrier();
  });
  // A stray rank 2 with another token fails; rank 0 drops it and waits on.
  const auto stray = catch_ctrl([&] { (void)Bootstrap::connect(config(2, "stray-token")); });
  CHECK(stray.kind() == CtrlError::Kind::kAuth);
  CHECK_THAT(stray.what(),
             Catch::Matches(R"(token mismatch: peer rank 0 \(host-0 127\.0\.0\.1:\d+\) holds another token.*)"));
  const auto none = catch_ctrl([&] { (void)Bootstrap::connect(config(2, "")); });
  CHECK_THAT(none.what(), Catch::StartsWith("peer rank 0 (host-0 127.0.0.1:") && Catch::Contains("requires a token"));
  // The real rank 2 completes the world.
  auto b = Bootstrap::connect(config(2, "world-token"));
  b.barrier();
  CHECK_NOTHROW(root.get());
  CHECK_NOTHROW(rank1.get());
  CHECK(hosts == std::vector<std::string>{"host-0", "host-1", "host-2"});
}
