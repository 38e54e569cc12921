#include "fabench/ctrl/token.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "fabench/ctrl/hmac.hpp"

namespace fabench::ctrl {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The Error text with which an accepting end refuses a wrong proof.
constexpr std::string_view kMismatch = "token mismatch";

[[noreturn]] void auth_error(const std::string& text) { throw CtrlError(CtrlError::Kind::kAuth, text); }

std::string read_token_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) config_error(fmt::format("--token-file {}: {}", path, std::strerror(errno)));
  std::string text(kMaxTokenFileBytes + 1, '\0');
  std::size_t got = 0;
  int err = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (err != 0) config_error(fmt::format("--token-file {}: {}", path, std::strerror(err)));
  if (got > kMaxTokenFileBytes) {
    config_error(fmt::format("--token-file {}: larger than {} bytes; is it the token file?", path, kMaxTokenFileBytes));
  }
  text.resize(got);
  if (text.ends_with('\n')) text.pop_back();
  if (text.ends_with('\r')) text.pop_back();
  if (text.empty()) config_error(fmt::format("--token-file {}: the file holds no token", path));
  return text;
}

// What is left of the handshake's time, at least 100 ms: an answer already on
// its way is read, not refused.
milliseconds left(Clock::time_point deadline) {
  return std::max(std::chrono::ceil<milliseconds>(deadline - Clock::now()), milliseconds(100));
}

std::string mismatch(const Channel& ch) {
  return fmt::format("{}: {} holds another token (check {} on both ends)", kMismatch, ch.describe(), kTokenSources);
}

// When exactly one end holds a token, each end says what is missing where.
std::string one_sided(const Channel& ch, bool mine, bool accepting) {
  if (mine && accepting) {
    return fmt::format("{} holds no token, but this end requires one; give it the same token ({})", ch.describe(),
                       kTokenSources);
  }
  if (mine) {
    return fmt::format(
        "{} holds no token, so it serves any host that reaches it; give it the same token, or run "
        "this end without one",
        ch.describe());
  }
  if (accepting) {
    return fmt::format("{} holds a token, but this end has none; give this end the same token ({})", ch.describe(),
                       kTokenSources);
  }
  return fmt::format("{} requires a token; give this end the same one ({})", ch.describe(), kTokenSources);
}

CtrlError during_check(const CtrlError& e) {
  return CtrlError(e.kind(), fmt::format("{} during the token check", e.what()));
}

void send_proof(Channel& ch, const Proof& proof, Clock::time_point deadline) {
  try {
    ch.send(proof, left(deadline));
  } catch (const CtrlError& e) {
    throw during_check(e);
  }
}

// The peer's Proof, next on `ch`. An Error saying "token mismatch" is an
// accepting end refusing ours.
Proof expect_proof(Channel& ch, Clock::time_point deadline) {
  Message m;
  try {
    m = ch.recv(left(deadline));
  } catch (const CtrlError& e) {
    throw during_check(e);
  }
  if (const auto* p = std::get_if<Proof>(&m)) return *p;
  if (const auto* e = std::get_if<Error>(&m)) {
    if (e->text.starts_with(kMismatch)) auth_error(mismatch(ch));
    throw CtrlError(CtrlError::Kind::kPeerError, fmt::format("{} refused us: {}", ch.describe(), e->text));
  }
  throw CtrlError(CtrlError::Kind::kProtocol,
                  fmt::format("{} sent {} where its token proof was expected", ch.describe(), type_name(type_of(m))));
}

void append_u32(std::vector<std::uint8_t>& out, std::size_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

std::string resolve_token(const std::optional<std::string>& flag, const std::optional<std::string>& file,
                          const EnvLookup& env) {
  if (flag && file) config_error("--token and --token-file contradict each other: give the token one way");
  if (flag) {
    if (flag->empty()) config_error("--token is empty");
    return *flag;
  }
  if (file) return read_token_file(*file);
  auto value = env(kTokenEnvVar);
  return value ? *value : std::string();
}

std::array<std::uint8_t, kTokenNonceBytes> random_nonce() {
  std::array<std::uint8_t, kTokenNonceBytes> out{};
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) auth_error(fmt::format("cannot draw a token challenge: getrandom: {}", std::strerror(errno)));
    got += static_cast<std::size_t>(n);
  }
  return out;
}

Proof make_proof(const std::string& token, bool by_accepting, const Hello& connecting, const Hello& accepting) {
  // Length-prefixed fields, so no two transcripts share their bytes.
  const std::string_view label = by_accepting ? "fabench token v1: accepting" : "fabench token v1: connecting";
  std::vector<std::uint8_t> transcript(label.begin(), label.end());
  transcript.push_back(0);
  for (const Hello* h : {&connecting, &accepting}) {
    const auto body = encode_payload(*h);
    append_u32(transcript, body.size());
    transcript.insert(transcript.end(), body.begin(), body.end());
  }
  const auto* key = reinterpret_cast<const std::uint8_t*>(token.data());
  Proof p;
  p.mac = hmac_sha256(std::span(key, token.size()), transcript);
  return p;
}

void check_token(Channel& ch, const Hello& mine, const Hello& theirs, const Credentials& credentials,
                 Clock::time_point deadline) {
  const bool have = !credentials.token.empty();
  const bool they = !theirs.challenge.empty();
  if (!have && !they) return;
  if (have != they) auth_error(one_sided(ch, have, credentials.accepting));
  const Hello& connecting = credentials.accepting ? theirs : mine;
  const Hello& accepting = credentials.accepting ? mine : theirs;
  const Proof expected = make_proof(credentials.token, !credentials.accepting, connecting, accepting);
  if (!credentials.accepting) send_proof(ch, make_proof(credentials.token, false, connecting, accepting), deadline);
  const Proof got = expect_proof(ch, deadline);
  if (!equal_constant_time(got.mac, expected.mac)) {
    if (credentials.accepting) {
      try {
        ch.send(Error{std::string(kMismatch)}, left(deadline));
      } catch (const CtrlError&) {  // it is gone: it learns nothing either way
      }
    }
    auth_error(mismatch(ch));
  }
  // The accepting end proves itself only to a peer that has proved itself.
  if (credentials.accepting) send_proof(ch, make_proof(credentials.token, true, connecting, accepting), deadline);
}

}  // namespace fabench::ctrl
