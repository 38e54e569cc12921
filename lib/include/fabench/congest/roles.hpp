// Who does what in a congestion run (GPCNeT's split): congestors load the fabric with one of the
// patterns (flows.hpp) while victims run the measured tests; each victim test runs once alone
// (isolated) and once beside each pattern (loaded), and the Congestion Impact Factor compares
// the two (cif.hpp).
//
// Roles are drawn by a seeded shuffle (--congestors FRACTION, --seed) or named
// (--congestor-ranks LIST); every rank derives the same roles from the same flags. A run needs
// at least one congestor and two victims (a victim ring has two members at least).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabench::congest {

struct Roles {
  std::vector<std::uint32_t> victims;     // ascending
  std::vector<std::uint32_t> congestors;  // ascending
  [[nodiscard]] bool is_victim(std::uint32_t rank) const;
};

// "0,3-5,9" -> {0, 3, 4, 5, 9}, ascending; UserError naming a rank out of 0..ranks-1, a repeat,
// a reversed range or a token that is not a rank.
[[nodiscard]] std::vector<std::uint32_t> parse_rank_list(std::string_view list, std::uint32_t ranks);

// round(fraction x ranks) congestors (fraction in (0, 1)), drawn by a shuffle seeded by `seed`;
// UserError when that leaves no congestor or fewer than two victims.
[[nodiscard]] Roles choose_roles(std::uint32_t ranks, double fraction, std::uint64_t seed);

// The ranks of `congestors` congest, the others are victims; the same errors.
[[nodiscard]] Roles named_roles(std::uint32_t ranks, std::span<const std::uint32_t> congestors);

// "victims 0,4 (2); congestors 1-3,5-7 (6)".
[[nodiscard]] std::string describe(const Roles& roles);

// "1-3,5,7-9": ascending ranks as ranges.
[[nodiscard]] std::string rank_ranges(std::span<const std::uint32_t> ranks);

// A random ring over `members` (GPCNeT's random-ring victims): one cycle through all of them in
// a seeded order, so each member sends to next_of() and receives from prev_of(), never itself.
// A fresh `round` gives a fresh order from the same seed.
class Ring {
 public:
  Ring(std::span<const std::uint32_t> members, std::uint64_t seed, std::uint32_t round = 0);
  [[nodiscard]] const std::vector<std::uint32_t>& order() const noexcept { return order_; }
  [[nodiscard]] std::uint32_t next_of(std::uint32_t rank) const;
  [[nodiscard]] std::uint32_t prev_of(std::uint32_t rank) const;

 private:
  [[nodiscard]] std::size_t position(std::uint32_t rank) const;
  std::vector<std::uint32_t> order_;
};

}  // namespace fabench::congest
