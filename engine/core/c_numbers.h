// Numbers as text by the classic "C" rules ('.' as the decimal point, no grouping), whatever the
// process's locale: every number LiftLab writes to or reads from a file, the command line,
// --set, a spec or a CSV goes through here. Built on std::to_chars / std::from_chars, which
// never look at the locale. (printf's %g, strtod and std::to_string(double) follow LC_NUMERIC,
// which Qt sets from the environment: under de_DE.UTF-8 they write and expect "0,5".)
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace liftlab {

// The shortest text that reads back to exactly `v`: "0.1", "1e-07", "-0", "nan", "inf", "-inf".
std::string c_shortest(double v);
// printf's "%.<significant>g" (significant ≥ 1): "0.52982264518737798" for 17.
std::string c_general(double v, int significant);
// printf's "%.<decimals>f" (decimals ≥ 0): "0.13" for 2.
std::string c_fixed(double v, int decimals);

// Strict readers of one whole cell or argument: false unless all of `text` is the number.
// A decimal number with an optional sign ('+' allowed), fraction and exponent, or nan / inf /
// infinity; never a hexadecimal form, never surrounding spaces. A value below the smallest
// subnormal reads as ±0 (a subnormal is a value: the writer produces them); one beyond the
// largest double is refused (and sets *beyond_range when given).
bool c_parse_double(std::string_view text, double* out, bool* beyond_range = nullptr);
// A decimal integer in [lo, hi] (an optional sign, '+' allowed).
bool c_parse_int(std::string_view text, long long lo, long long hi, long long* out);
// A decimal unsigned 64-bit integer (no sign).
bool c_parse_uint64(std::string_view text, std::uint64_t* out);

}  // namespace liftlab
