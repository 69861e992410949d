#pragma once
// Parsing flag values (switches, counts, real numbers, byte sizes, choices) with errors that name the flag: shared by the
// kinds of value_kinds.h and the shorthand flags.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::settings::detail {

/// "" and true/1/yes/on are true, false/0/no/off false (any case); anything else throws naming --`flag`.
bool parse_switch(std::string_view flag, std::string_view value);
/// A non-negative decimal integer no larger than `max`; with `byte_suffix`, an optional K/M/G (binary)
/// suffix.
int64_t parse_count(std::string_view flag, std::string_view value, bool byte_suffix, int64_t max = INT64_MAX);
/// A finite decimal number in (0, `max`], the whole of `value` as std::from_chars reads it in any locale (no
/// spaces, no '+', no hex, no nan/inf, nothing after it); else throws "--flag: expected a number in (0, max],
/// got 'value'".
double parse_real(std::string_view flag, std::string_view value, double max);
/// `max` as the shortest decimal that reads back as it ("100", "0.999").
std::string shortest_decimal(double max);
/// `value` as a string when it is UTF-8 that JSON can hold (settings are saved as JSON: a path with other bytes
/// would fail the compile at its end); else throws "--flag: expected UTF-8 text, got 'value'".
std::string parse_text(std::string_view flag, std::string_view value);
/// A byte size (K/M/G suffixes) that must be positive.
int64_t parse_positive_bytes(std::string_view flag, std::string_view value);
/// The '|'-separated values of a row ("cpu|cuda" -> {"cpu", "cuda"}).
std::vector<std::string> split_choices(std::string_view values);
/// `value` when it is one of `choices`; else throws "--flag: expected a or b, got 'value'".
void check_choice(std::string_view flag, std::string_view value, std::string_view choices);

}  // namespace kiln::settings::detail
