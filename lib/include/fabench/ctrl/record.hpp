// Record: the numbers of a result that crosses the control channel, each under
// its name (ctrl::Result::record, world::RankReport::record). A reader asks for
// a field by name, so a field added, dropped or reordered by the writer never
// shifts the others, and one that is missing is named in the error.
//
// A field is a double (times), an exact u64 (counts, hashes: no rounding
// through a double) or a list of doubles (per-iteration times). Names are
// unique within a record; the order is the writer's, kept on the wire.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "fabench/base/error.hpp"

namespace fabench::ctrl {

// A field that is missing or of another kind; the text names it. A RunError (base/error.hpp):
// a peer's record that does not read ends the run with exit status 1.
class RecordError : public RunError {
 public:
  using RunError::RunError;
};

// The kinds in the order of their tag on the wire (wire.cpp): 0 f64, 1 u64, 2 f64 list.
using FieldValue = std::variant<double, std::uint64_t, std::vector<double>>;

class Record {
 public:
  struct Field {
    std::string name;
    FieldValue value;

    friend bool operator==(const Field&, const Field&) = default;
  };

  Record() = default;

  // Sets field `name` (replacing one of that name in place, else appended).
  Record& set_f64(std::string_view name, double v) { return set(name, FieldValue{v}); }
  Record& set_u64(std::string_view name, std::uint64_t v) { return set(name, FieldValue{v}); }
  Record& set_list(std::string_view name, std::vector<double> v) { return set(name, FieldValue{std::move(v)}); }
  Record& set(std::string_view name, FieldValue v);

  [[nodiscard]] bool has(std::string_view name) const noexcept { return find(name) != nullptr; }
  // The field's value; RecordError when it is missing or of another kind
  // ("result record has no field \"hash\" (it has: seconds, wrong)").
  [[nodiscard]] double f64(std::string_view name) const;
  [[nodiscard]] std::uint64_t u64(std::string_view name) const;
  [[nodiscard]] const std::vector<double>& list(std::string_view name) const;

  [[nodiscard]] const std::vector<Field>& fields() const noexcept { return fields_; }
  [[nodiscard]] bool empty() const noexcept { return fields_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
  // "seconds, wrong, hash" ("none" when empty).
  [[nodiscard]] std::string names() const;

  friend bool operator==(const Record&, const Record&) = default;

 private:
  [[nodiscard]] const Field* find(std::string_view name) const noexcept;
  [[nodiscard]] const FieldValue& get(std::string_view name, std::size_t kind) const;

  std::vector<Field> fields_;
};

// "f64", "u64", "f64 list": a kind's name in messages.
[[nodiscard]] std::string_view field_kind_name(std::size_t kind) noexcept;

// A result struct's fields by name, declared once beside the struct:
//   static constexpr auto record_fields() {
//     return std::tuple{ctrl::RecordField{"seconds", &RankResult::seconds}, ...};
//   }
// write_fields(s) makes its Record, read_fields(r, s) fills it back (RecordError
// naming a missing field). A double is an f64, a bool or an integer a u64, a
// std::vector<double> an f64 list.
template <typename T, typename M>
struct RecordField {
  std::string_view name;
  M T::*member;
};
template <typename T, typename M>
RecordField(std::string_view, M T::*) -> RecordField<T, M>;  // for compilers without aggregate CTAD (clang < 17)

template <typename T>
[[nodiscard]] Record write_fields(const T& s) {
  Record r;
  std::apply(
      [&](const auto&... f) {
        const auto put = [&](std::string_view name, const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, double>) {
            r.set_f64(name, v);
          } else if constexpr (std::is_same_v<V, std::vector<double>>) {
            r.set_list(name, v);
          } else {
            static_assert(std::is_integral_v<V>, "a record field is a double, an integer, a bool or a vector<double>");
            r.set_u64(name, static_cast<std::uint64_t>(v));
          }
        };
        (put(f.name, s.*(f.member)), ...);
      },
      T::record_fields());
  return r;
}

template <typename T>
void read_fields(const Record& r, T& s) {
  std::apply(
      [&](const auto&... f) {
        const auto get = [&](std::string_view name, auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, double>) {
            v = r.f64(name);
          } else if constexpr (std::is_same_v<V, std::vector<double>>) {
            v = r.list(name);
          } else if constexpr (std::is_same_v<V, bool>) {
            v = r.u64(name) != 0;
          } else {
            v = static_cast<V>(r.u64(name));
          }
        };
        (get(f.name, s.*(f.member)), ...);
      },
      T::record_fields());
}

template <typename T>
[[nodiscard]] T read_fields(const Record& r) {
  T s{};
  read_fields(r, s);
  return s;
}

}  // namespace fabench::ctrl
