//! Links the `clawhost` binary again when what `link/order-cc.sh` reads at
//! link time changes (cargo does not see the linker's inputs otherwise).

fn main() {
    for file in ["order-cc.sh", "hot-names.awk", "hot-functions.txt"] {
        println!("cargo:rerun-if-changed=link/{file}");
    }
}
