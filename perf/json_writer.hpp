// The `--json FILE` output of the standalone drivers (overhead, loops): every raw timing, so that
// perf/plot.py can draw charts without parsing the human-readable tables. A small writer rather
// than a JSON library, to keep the drivers' dependencies at forkjoin and the competitors.
//
//   json_writer j;
//   j.begin_object().key("n").value(30).key("seconds").begin_array().value(0.5).end_array();
//   j.end_object();
//   write_json_file("out.json", j);
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fj_perf {

class json_writer {
public:
    json_writer& begin_object() { return open('{'); }
    json_writer& end_object() { return close('}'); }
    json_writer& begin_array() { return open('['); }
    json_writer& end_array() { return close(']'); }

    // The next value is this member of the enclosing object.
    json_writer& key(std::string_view k) {
        separate();
        string(k);
        m_out += ':';
        m_after_key = true;
        return *this;
    }

    json_writer& value(std::string_view s) {
        separate();
        string(s);
        return *this;
    }
    json_writer& value(char const* s) { return value(std::string_view{s}); }
    json_writer& value(bool b) {
        separate();
        m_out += b ? "true" : "false";
        return *this;
    }
    json_writer& value(long long v) {
        separate();
        m_out += std::to_string(v);
        return *this;
    }
    json_writer& value(long v) { return value(static_cast<long long>(v)); }
    json_writer& value(int v) { return value(static_cast<long long>(v)); }
    // %.17g round-trips a double exactly; JSON has no NaN or infinity, so those become null.
    json_writer& value(double v) {
        separate();
        if (!std::isfinite(v)) {
            m_out += "null";
            return *this;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        m_out += buf;
        return *this;
    }

    template <class T>
    json_writer& array(std::vector<T> const& values) {
        begin_array();
        for (auto const& v : values)
            value(v);
        return end_array();
    }

    std::string const& str() const { return m_out; }

private:
    json_writer& open(char c) {
        separate();
        m_out += c;
        m_first.push_back(true);
        return *this;
    }
    json_writer& close(char c) {
        m_out += c;
        m_first.pop_back();
        return *this;
    }
    // A comma before every element of a container but the first; none right after a key.
    void separate() {
        if (m_after_key) {
            m_after_key = false;
            return;
        }
        if (!m_first.empty()) {
            if (!m_first.back())
                m_out += ',';
            m_first.back() = false;
        }
    }
    void string(std::string_view s) {
        m_out += '"';
        for (char const c : s) {
            if (c == '"' || c == '\\') {
                m_out += '\\';
                m_out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                m_out += buf;
            } else {
                m_out += c;
            }
        }
        m_out += '"';
    }

    std::string m_out;
    std::vector<bool> m_first; // per open container: no element written yet
    bool m_after_key = false;
};

// Writes the document; false (with a message on stderr) if the file cannot be written.
inline bool write_json_file(std::string const& path, json_writer const& j) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        std::perror(("json: cannot open " + path).c_str());
        return false;
    }
    bool const ok = std::fputs(j.str().c_str(), f) >= 0 && std::fputc('\n', f) != EOF;
    bool const closed = std::fclose(f) == 0;
    if (!ok || !closed)
        std::fprintf(stderr, "json: error writing %s\n", path.c_str());
    return ok && closed;
}

} // namespace fj_perf
