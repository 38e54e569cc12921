// The shared token: an optional secret that both ends of a control
// connection hold, so that a pair server or a rendezvous on a shared network
// serves only its owners. It is checked by challenge-response during the
// Hello exchange (Channel::exchange_hello); the token itself never crosses
// the wire.
//
// Each end that holds a token puts a fresh random nonce (getrandom(2),
// kTokenNonceBytes) in its Hello.challenge; an end without one sends none.
// After both Hellos:
//   neither end holds a token   nothing more: any host that reaches the port is served
//   only one end holds one      both ends fail at once, each with its own line
//   both do                     the connecting end sends a Proof; the accepting end
//                               checks it (in constant time) and only then answers with
//                               its own Proof, which the connecting end checks
// A Proof is HMAC-SHA256(token, label || connecting Hello || accepting Hello)
// (make_proof): both nonces make it good for this connection only, and the
// label ("connecting"/"accepting") keeps one end's proof from ever serving as
// the other's. The accepting end answers a wrong proof with "token mismatch"
// and no proof of its own, so a stray client learns nothing about the token.
//
// This authenticates the ends when they connect; it does not encrypt the
// connection, and a man-in-the-middle on the path could still take over the
// conversation afterwards.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::ctrl {

inline constexpr const char* kTokenEnvVar = "FABENCH_TOKEN";
// Where a user gives the token, for hints in error lines.
inline constexpr const char* kTokenSources = "--token-file, --token or FABENCH_TOKEN";
// A token file larger than this is not a token file.
inline constexpr std::size_t kMaxTokenFileBytes = 4096;

// --token (`flag`) over --token-file (`file`) over FABENCH_TOKEN (an empty
// variable counts as unset); "" when none is given. A token file holds the
// token alone; a trailing newline (\n or \r\n) is not part of it. Throws
// CtrlError kConfig for both flags at once, an empty token, or a file that
// cannot be read, is empty or is too large.
[[nodiscard]] std::string resolve_token(const std::optional<std::string>& flag, const std::optional<std::string>& file,
                                        const EnvLookup& env);

// kTokenNonceBytes from getrandom(2); throws CtrlError kNetwork if the
// kernel has none to give.
[[nodiscard]] std::array<std::uint8_t, kTokenNonceBytes> random_nonce();

// The Proof that the end in role `by_accepting` holds `token`, for the
// connection on which these two Hellos (challenges included) were exchanged.
[[nodiscard]] Proof make_proof(const std::string& token, bool by_accepting, const Hello& connecting,
                               const Hello& accepting);

// The check after both Hellos, bounded by `deadline` (see the top of this
// file). Throws CtrlError kAuth naming `ch`'s peer when a token is missing on
// one end or the tokens differ ("token mismatch: ..."), and the CtrlError of
// the channel when the peer is silent or gone.
void check_token(Channel& ch, const Hello& mine, const Hello& theirs, const Credentials& credentials,
                 std::chrono::steady_clock::time_point deadline);

}  // namespace fabench::ctrl
