#include "core/c_numbers.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace liftlab {

namespace {

std::string chars_of(double v, std::chars_format format, int precision, size_t capacity) {
    std::string out(capacity, '\0');
    const auto r = std::to_chars(out.data(), out.data() + out.size(), v, format, precision);
    // The capacities below hold every double in these formats; an error here is a bug.
    if (r.ec != std::errc()) return "?";
    out.resize(static_cast<size_t>(r.ptr - out.data()));
    return out;
}

// A leading '+' is allowed (strtod took one): it is dropped unless a second sign follows.
std::string_view without_plus(std::string_view text) {
    if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+')
        text.remove_prefix(1);
    return text;
}

// from_chars reports "out of range" both for a value beyond the largest double and for one below
// the smallest subnormal. Tells them apart by the decimal exponent of the leading non-zero digit
// of the (already validated) text: negative means below 1, an underflow.
bool is_underflow(std::string_view text) {
    size_t i = text[0] == '-' ? 1 : 0;
    bool seen_digit = false, after_point = false;
    long long integer_digits = 0, zeros_after_point = 0;
    for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
        const char c = text[i];
        if (c == '.') {
            after_point = true;
        } else if (!seen_digit && c == '0') {
            if (after_point) ++zeros_after_point;
        } else if (!seen_digit) {
            seen_digit = true;
            if (!after_point) integer_digits = 1;
        } else if (!after_point) {
            ++integer_digits;
        }
    }
    if (!seen_digit) return true;  // all zeros cannot overflow
    // The decimal exponent of the first non-zero digit.
    const long long leading = integer_digits > 0 ? integer_digits - 1 : -(zeros_after_point + 1);
    long long exponent = 0;
    if (i < text.size()) {  // the exponent, saturated (its digits can be many)
        ++i;
        const bool negative = i < text.size() && text[i] == '-';
        if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
        for (; i < text.size(); ++i)
            exponent = std::min<long long>(exponent * 10 + (text[i] - '0'), 1'000'000'000);
        if (negative) exponent = -exponent;
    }
    return leading + exponent < 0;
}

}  // namespace

std::string c_shortest(double v) {
    std::string out(32, '\0');  // the shortest form of any double is at most 24 characters
    const auto r = std::to_chars(out.data(), out.data() + out.size(), v);
    out.resize(r.ec == std::errc() ? static_cast<size_t>(r.ptr - out.data()) : 0);
    return out;
}

std::string c_general(double v, int significant) {
    if (significant < 1) significant = 1;
    return chars_of(v, std::chars_format::general, significant,
                    static_cast<size_t>(significant) + 16);
}

std::string c_fixed(double v, int decimals) {
    if (decimals < 0) decimals = 0;
    // The largest double has 309 integer digits.
    return chars_of(v, std::chars_format::fixed, decimals, static_cast<size_t>(decimals) + 330);
}

bool c_parse_double(std::string_view text, double* out, bool* beyond_range) {
    if (beyond_range) *beyond_range = false;
    text = without_plus(text);
    if (text.empty()) return false;
    double v = 0;
    const auto r =
        std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
    if (r.ptr != text.data() + text.size()) return false;
    if (r.ec == std::errc::result_out_of_range) {
        if (!is_underflow(text)) {
            if (beyond_range) *beyond_range = true;
            return false;
        }
        v = text[0] == '-' ? -0.0 : 0.0;
    } else if (r.ec != std::errc()) {
        return false;
    }
    *out = v;
    return true;
}

bool c_parse_int(std::string_view text, long long lo, long long hi, long long* out) {
    text = without_plus(text);
    if (text.empty()) return false;
    long long v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v, 10);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool c_parse_uint64(std::string_view text, std::uint64_t* out) {
    if (text.empty() || text[0] == '-' || text[0] == '+') return false;
    std::uint64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v, 10);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return false;
    *out = v;
    return true;
}

}  // namespace liftlab
