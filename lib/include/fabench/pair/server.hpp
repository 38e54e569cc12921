// The pair server: owns the accept loop around follow() (peer.hpp).
//
// Nothing one connection does holds the others up:
//  - each new connection completes its Hello on a thread of its own, within
//    PeerOptions::handshake (a port scanner, a health check or a half-sent
//    Hello is dropped and logged when that passes); with a token
//    (PeerOptions::token), the token check is part of that handshake, and a
//    client without the token or with another one is dropped at once;
//  - one client at a time is served (a serving thread runs it, or hands it
//    to its serving process and waits for that to end); a client whose
//    Hello arrives while another is served is refused at once with one line,
//    "busy: serving HOST (ADDR) since HH:MM:SS (N s)" (after a grace of up to
//    a second, the time a client that just said goodbye takes to be released);
//  - the client being served is watched in every phase (follow(), the
//    engines' RunLimits::leader): a dead one is dropped at once, a stopped or
//    silent one after the timeout, and its QPs and memory are released before
//    the next client is taken;
//  - a fabench-lat/-bw server serves each client in a process of its own
//    (ctrl::ServingProcess, client_process_body): one thread with its own
//    Context, so that its timed loops run in a single-threaded process while
//    this one keeps its threads; a serving process that crashes is named in
//    the log and to its client, and the next client gets a fresh one.
//    --loopback serves its one client on a thread of the client's process.
#pragma once

#include <atomic>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/serving_process.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/pair/peer.hpp"

namespace fabench::pair {

// Accepts clients on `listener` and serves them one after another, until
// `stop` becomes true or (once) after the first client. Logs each client and
// each failure; never throws for a client's fault.
//
// This one serves each client on a thread of this process, with `ctx`.
void serve(ctrl::Listener& listener, const harness::Context& ctx, const PeerOptions& options,
           const std::atomic<bool>& stop, bool once);
// This one hands each client to a child of `processes` (whose body is
// client_process_body's). Throws when the spawner of `processes` is gone:
// no client can be served any more.
void serve(ctrl::Listener& listener, ctrl::ServingProcess& processes, const PeerOptions& options,
           const std::atomic<bool>& stop, bool once);

// What a serving process runs for its client: opens a Context with
// `context`, then serve_client(). 0 after the client's Goodbye, else 1.
[[nodiscard]] ctrl::ServingProcess::Body client_process_body(harness::ContextOptions context, PeerOptions options);

// One client to its Goodbye (true) or failure: logs "client X connected",
// then "said goodbye" or why it was dropped (and tells the client why).
bool serve_client(ctrl::Channel& ch, const harness::Context& ctx, const PeerOptions& options);

}  // namespace fabench::pair
