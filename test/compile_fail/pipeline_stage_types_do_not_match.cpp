// expect: the left filter's output type must be the right filter's input type
#include <string>

#include <forkjoin/forkjoin.hpp>

int main() {
    // The input makes ints, but the next stage takes strings.
    fj::parallel_pipeline(
        4, fj::make_filter<void, int>(fj::filter_mode::serial_in_order, [](fj::flow_control& fc) {
               fc.stop();
               return 0;
           }) & fj::make_filter<std::string, void>(fj::filter_mode::parallel, [](std::string) {}));
}
