#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| futexhash::fuzz_targets::trace_line(data));
