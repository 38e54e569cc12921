// The pair server: owns the accept loop around follow() (peer.hpp).
//
// Nothing one connection does holds the others up:
//  - each new connection completes its Hello on a thread of its own, within
//    PeerOptions::handshake (a port scanner, a health check or a half-sent
//    Hello is dropped and logged when that passes); with a token
//    (PeerOptions::token), the token check is part of that handshake, and a
//    client without the token or with another one is dropped at once;
//  - one client at a time is served, on a serving thread; a client whose
//    Hello arrives while another is served is refused at once with one line,
//    "busy: serving HOST (ADDR) since HH:MM:SS (N s)" (after a grace of up to
//    a second, the time a client that just said goodbye takes to be released);
//  - the client being served is watched in every phase (follow(), the
//    engines' RunLimits::leader): a dead one is dropped at once, a stopped or
//    silent one after the timeout, and its QPs and memory are released before
//    the next client is taken.
#pragma once

#include <atomic>

#include "fabench/ctrl/channel.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/pair/peer.hpp"

namespace fabench::pair {

// Accepts clients on `listener` and serves them one after another, until
// `stop` becomes true or (once) after the first client. Logs each client and
// each failure; never throws for a client's fault.
void serve(ctrl::Listener& listener, const harness::Context& ctx, const PeerOptions& options,
           const std::atomic<bool>& stop, bool once);

}  // namespace fabench::pair
