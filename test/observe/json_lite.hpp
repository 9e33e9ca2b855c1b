// A small, strict JSON parser for tests that check files the runtime writes (trace mode). It
// accepts exactly RFC 8259 JSON (objects, arrays, strings with escapes, numbers, true, false,
// null) and throws std::runtime_error naming the offset of the first error.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fj_test::json {

struct value {
    enum class kind { null, boolean, number, string, array, object } type = kind::null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<value> array;
    std::map<std::string, value> object;

    const value& at(const std::string& key) const {
        const auto it = object.find(key);
        if (type != kind::object || it == object.end())
            throw std::runtime_error("json: no member '" + key + "'");
        return it->second;
    }
    bool has(const std::string& key) const {
        return type == kind::object && object.count(key) != 0;
    }
};

class parser {
public:
    explicit parser(const std::string& text) : m_text(text) {}

    value parse_document() {
        value v = parse_value();
        skip_space();
        if (m_pos != m_text.size())
            fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("json: " + what + " at offset " + std::to_string(m_pos));
    }
    void skip_space() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' ||
                                         m_text[m_pos] == '\r' || m_text[m_pos] == '\t'))
            ++m_pos;
    }
    char peek() {
        skip_space();
        if (m_pos >= m_text.size())
            fail("unexpected end");
        return m_text[m_pos];
    }
    void expect(char c) {
        if (peek() != c)
            fail(std::string("expected '") + c + "'");
        ++m_pos;
    }
    void literal(const char* word) {
        for (const char* p = word; *p != '\0'; ++p, ++m_pos)
            if (m_pos >= m_text.size() || m_text[m_pos] != *p)
                fail(std::string("expected ") + word);
    }

    value parse_value() {
        value v;
        switch (peek()) {
        case '{':
            v.type = value::kind::object;
            ++m_pos;
            if (peek() == '}') {
                ++m_pos;
                return v;
            }
            for (;;) {
                if (peek() != '"')
                    fail("expected a member name");
                std::string key = parse_string();
                expect(':');
                v.object[key] = parse_value();
                if (peek() == ',') {
                    ++m_pos;
                    continue;
                }
                expect('}');
                return v;
            }
        case '[':
            v.type = value::kind::array;
            ++m_pos;
            if (peek() == ']') {
                ++m_pos;
                return v;
            }
            for (;;) {
                v.array.push_back(parse_value());
                if (peek() == ',') {
                    ++m_pos;
                    continue;
                }
                expect(']');
                return v;
            }
        case '"':
            v.type = value::kind::string;
            v.string = parse_string();
            return v;
        case 't':
            literal("true");
            v.type = value::kind::boolean;
            v.boolean = true;
            return v;
        case 'f':
            literal("false");
            v.type = value::kind::boolean;
            return v;
        case 'n':
            literal("null");
            return v;
        default:
            v.type = value::kind::number;
            v.number = parse_number();
            return v;
        }
    }

    std::string parse_string() {
        expect('"');
        std::string out;
        for (;;) {
            if (m_pos >= m_text.size())
                fail("unterminated string");
            const char c = m_text[m_pos++];
            if (c == '"')
                return out;
            if (static_cast<unsigned char>(c) < 0x20)
                fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (m_pos >= m_text.size())
                fail("unterminated escape");
            const char e = m_text[m_pos++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u':
                if (m_pos + 4 > m_text.size())
                    fail("short \\u escape");
                for (int i = 0; i < 4; ++i)
                    if (!std::isxdigit(static_cast<unsigned char>(m_text[m_pos + i])))
                        fail("bad \\u escape");
                out += '?'; // the tests never compare non-ASCII text
                m_pos += 4;
                break;
            default:
                fail("bad escape");
            }
        }
    }

    double parse_number() {
        const std::size_t start = m_pos;
        if (m_text[m_pos] == '-')
            ++m_pos;
        const auto digits = [&] {
            const std::size_t from = m_pos;
            while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos])))
                ++m_pos;
            return m_pos - from;
        };
        if (m_pos >= m_text.size() || !std::isdigit(static_cast<unsigned char>(m_text[m_pos])))
            fail("expected a value");
        if (m_text[m_pos] == '0')
            ++m_pos; // no leading zeros
        else
            digits();
        if (m_pos < m_text.size() && m_text[m_pos] == '.') {
            ++m_pos;
            if (digits() == 0)
                fail("expected digits after '.'");
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
            ++m_pos;
            if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-'))
                ++m_pos;
            if (digits() == 0)
                fail("expected an exponent");
        }
        return std::strtod(m_text.substr(start, m_pos - start).c_str(), nullptr);
    }

    const std::string& m_text;
    std::size_t m_pos = 0;
};

inline value parse(const std::string& text) {
    return parser(text).parse_document();
}

} // namespace fj_test::json
