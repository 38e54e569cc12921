// Which pairs of nodes fabench-accept measures, and in which rounds: a round is a set of disjoint
// pairs (no node in two of them) that run at the same time. Pure functions of the node count (and,
// for --pairs, of a text file and the node names).
//
//   round_robin(n)   every pair exactly once, by the circle method: n - 1 rounds of n/2 pairs for
//                    even n; n rounds of (n-1)/2 pairs, one node idle in each, for odd n.
//   bisection(n)     nodes 0..n/2-1 against nodes n/2..n-1, all at once: every round loads the
//                    bisection with floor(n/2) disjoint pairs, and ceil(n/2) rounds cover every
//                    cross pair once (for odd n one node of the upper half idles per round).
//   load_pairs()     a --pairs file (format below), packed into rounds by pack_rounds().
//   retest_schedule  the pairs to measure again, packed into at most as many rounds as their
//                    original rounds (so the time bound of budget.hpp holds).
//
// Pairs of round_robin() and bisection() have a < b; a pair from a file keeps its order. Either
// way both directions of a pair are measured; `a` is the side that leads (the client).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace fabench::accept {

// Upper limit on nodes: round_robin(8192) holds 33.5 M pairs (268 MB).
inline constexpr std::uint32_t kMaxNodes = 8192;

struct Pair {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  friend bool operator==(const Pair&, const Pair&) = default;
};

struct Schedule {
  std::uint32_t nodes = 0;
  std::vector<std::vector<Pair>> rounds;  // each round's pairs are disjoint
  [[nodiscard]] std::size_t pair_count() const;
};

// n within 2..kMaxNodes, else AcceptError.
[[nodiscard]] Schedule round_robin(std::uint32_t n);
[[nodiscard]] Schedule bisection(std::uint32_t n);

// First fit, in the given order: each pair goes to the earliest round where neither of its nodes
// is busy. Throws AcceptError for a node >= n, a self-pair or a pair given twice (either order).
[[nodiscard]] Schedule pack_rounds(std::uint32_t n, std::span<const Pair> pairs);

// `pairs` (each in `original`, either order) packed by pack_rounds(), or grouped by their rounds
// in `original` when that takes fewer rounds: never more rounds than `original` has.
[[nodiscard]] Schedule retest_schedule(const Schedule& original, std::span<const Pair> pairs);

// A --pairs file: one pair per line, "A B", where each of A and B is a node index (digits,
// 0..n-1) or one of `node_names` (n = node_names.size(); names may be empty strings when the
// driver has none). '#' starts a comment; blank lines are skipped; fields are separated by
// spaces or tabs. Errors are one line naming the file and line:
//   "pairs.txt:3: expected two nodes \"A B\" (got 3 fields)"
//   "pairs.txt:3: unknown node \"h9\" (a node index 0..3 or a node name)"
//   "pairs.txt:4: self-pair h2 h2 (node 2)"
//   "pairs.txt:5: duplicate pair 3 1 (first on line 2)"
//   "pairs.txt: no pairs"
[[nodiscard]] std::vector<Pair> load_pairs(const std::filesystem::path& path, std::span<const std::string> node_names);

}  // namespace fabench::accept
