#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| futexhash::fuzz_targets::table_ops(data));
