//! Block-compressed texels (BC1 to BC7) as the H200's texture unit decodes them.
//!
//! Direct3D's BC format documentation gives each block's layout and which endpoints
//! blend into which palette entry, but it leaves the blends' precision to the hardware
//! (its functional spec allows interpolated texels a tolerance). The H200's blends were
//! recorded texel by texel through resource views: clients/runtime/texture_views.cu (one
//! block of each format) and clients/probes/views.c, section `bc-view-read-modes` (BC1
//! with sRGB), goldens in clients/{runtime,probes}/goldens/NVIDIA_H200-580.159.04/. What
//! they show:
//!
//! - BC1 (and the colours of BC2 and BC3) follow the palette of NVIDIA's G80-class
//!   decoder as NVIDIA Texture Tools publishes it (`evaluatePaletteNV5x`): red and blue
//!   blended on the 5-bit endpoints and scaled by 22/8 (33/8 for the midpoint), green on
//!   the 8-bit expansions with a weight of 80/256 (128/256 for the midpoint) and a
//!   correction of a quarter of the difference. The recorded 2/3 blend of white and
//!   black is red 170, green 175; the midpoint of blue and red is red 127.
//! - BC4 and BC5 blend in 16 bits: each endpoint expanded by repeating its bits (unsigned
//!   `e * 257`, signed `±(m << 8 | m << 1 | m >> 6)` of the magnitude `m`), and a blend is
//!   the endpoint with the larger share stepped towards the other by the 8-bit difference
//!   times 36 per seventh (eight-value blocks) or 48 per fifth (six-value blocks), the
//!   step a power of two of sevenths or fifths (1, 2 or 4): a texel of 4/7 of one endpoint
//!   steps 4 sevenths from the other. The result reads as a 16-bit UNORM or SNORM.
//! - BC3's alpha moves from the endpoint with the larger share by 36, 72 or 145 256ths
//!   of the difference (one, two or four sevenths) or 48 or 96 (one or two fifths),
//!   rounded to nearest, halves up (200 and 13 blend to 174 147 119 94 66 39).
//! - CU_TRSF_SRGB decodes BC1, BC2, BC3 and BC7 colours (not BC4, BC5, BC6H channels) as
//!   8-bit texels' (`super::srgb_to_linear`).
//! - BC6H and BC7 read as the `bcdec` decoder gives them.
//! - Linear filtering blends the texels as 16-bit UNORM or SNORM integers (BC6H: halves)
//!   and rounds the blend to one, halves up (`super::Stored`).
//!
//! Recorded: one block of each format (texture_views.cu, views.c), and the blends,
//! sRGB reads and linear filtering of clients/probes/texel_formats.c (sections bc-blends,
//! bc-srgb, bc-linear, bc-arrays: goldens in clients/probes/goldens/). Chosen where
//! nothing is recorded: a signed endpoint of -128 as -127 (Direct3D's; the probe's -128
//! blocks agree), BC4 and BC5 steps at differences the probe did not hold.

use super::BlockFormat;

/// Texel (`x`, `y`) of a block (each 0 to 3) as four f32 lanes' bits.
pub(super) fn decode(format: BlockFormat, block: &[u8], x: usize, y: usize) -> [u32; 4] {
    let at = 4 * y + x;
    let unorm8 = |v: u8| v as f32 / 255.0;
    let out: [f32; 4] = match format {
        BlockFormat::Bc1 => colour_texel(block, at, false).map(unorm8),
        BlockFormat::Bc2 => {
            let mut t = colour_texel(&block[8..], at, true);
            // Explicit 4-bit alpha, expanded by repeating its bits.
            let nibble = (block[at / 2] >> (4 * (at % 2))) & 0xf;
            t[3] = nibble * 17;
            t.map(unorm8)
        }
        BlockFormat::Bc3 => {
            let mut t = colour_texel(&block[8..], at, true);
            t[3] = alpha8(&block[..8], at);
            t.map(unorm8)
        }
        BlockFormat::Bc4 { signed } => [channel16(block, at, signed), 0.0, 0.0, 0.0],
        BlockFormat::Bc5 { signed } => [
            channel16(&block[..8], at, signed),
            channel16(&block[8..], at, signed),
            0.0,
            0.0,
        ],
        BlockFormat::Bc6h { signed } => {
            let mut rgb = [0f32; 48];
            bcdec_rs::bc6h_float(block, &mut rgb, 12, signed);
            [rgb[3 * at], rgb[3 * at + 1], rgb[3 * at + 2], 0.0]
        }
        BlockFormat::Bc7 => {
            let mut rgba = [0u8; 64];
            bcdec_rs::bc7(block, &mut rgba, 16);
            [0, 1, 2, 3].map(|c| unorm8(rgba[4 * at + c]))
        }
    };
    out.map(f32::to_bits)
}

/// The 2-bit index of texel `at` in a colour block (8 bytes), and its palette entry as
/// 8-bit red, green, blue, alpha. BC2 and BC3 (`four_only`) always have four colours;
/// BC1 three and transparent black where its first endpoint is not the greater.
fn colour_texel(block: &[u8], at: usize, four_only: bool) -> [u8; 4] {
    let c0 = u16::from_le_bytes([block[0], block[1]]);
    let c1 = u16::from_le_bytes([block[2], block[3]]);
    let indices = u32::from_le_bytes([block[4], block[5], block[6], block[7]]);
    let index = (indices >> (2 * at)) & 3;
    let four = four_only || c0 > c1;
    // 5-bit red and blue, 6-bit green.
    let split = |c: u16| {
        [
            (c >> 11) as i32,
            ((c >> 5) & 0x3f) as i32,
            (c & 0x1f) as i32,
        ]
    };
    let (e0, e1) = (split(c0), split(c1));
    let g0 = (e0[1] << 2) | (e0[1] >> 4);
    let g1 = (e1[1] << 2) | (e1[1] >> 4);
    let gdiff = g1 - g0;
    // Integer division truncates towards zero, as NVIDIA's C does.
    let rb = |c: usize, w0: i32, w1: i32, scale: i32| (w0 * e0[c] + w1 * e1[c]) * scale / 8;
    let rgb = match (index, four) {
        (0, _) => [3 * e0[0] * 22 / 8, g0, 3 * e0[2] * 22 / 8],
        (1, _) => [3 * e1[0] * 22 / 8, g1, 3 * e1[2] * 22 / 8],
        (2, true) => [
            rb(0, 2, 1, 22),
            (256 * g0 + gdiff / 4 + 128 + gdiff * 80) / 256,
            rb(2, 2, 1, 22),
        ],
        (3, true) => [
            rb(0, 1, 2, 22),
            (256 * g1 - gdiff / 4 + 128 - gdiff * 80) / 256,
            rb(2, 1, 2, 22),
        ],
        (2, false) => [
            rb(0, 1, 1, 33),
            (256 * g0 + gdiff / 4 + 128 + gdiff * 128) / 256,
            rb(2, 1, 1, 33),
        ],
        _ => return [0; 4],
    };
    let [r, g, b] = rgb.map(|v| v.clamp(0, 255) as u8);
    [r, g, b, 255]
}

/// The 3-bit index of texel `at` in a BC3/BC4 channel block (8 bytes), with the block's
/// endpoints as they compare (signed or not).
fn channel_index(block: &[u8], at: usize) -> usize {
    let mut bits = [0u8; 8];
    bits[..6].copy_from_slice(&block[2..8]);
    ((u64::from_le_bytes(bits) >> (3 * at)) & 7) as usize
}

/// A blended entry of a channel block's palette (`index` 2 to 7, 2 to 5 where the block
/// has six values): which endpoint it starts from (0 or 1) and how many steps (each a
/// seventh or a fifth, 1, 2 or 4 of them) it moves towards the other.
fn blend(index: usize, eight: bool) -> (usize, i32) {
    // Shares of endpoint 0 and 1, in sevenths or fifths.
    let (share0, share1) = if eight {
        (8 - index as i32, index as i32 - 1)
    } else {
        (6 - index as i32, index as i32 - 1)
    };
    // The hardware moves by a power of two of steps, from the endpoint whose share is
    // not one: 3/7 of endpoint 0 is 4 steps from endpoint 0 towards endpoint 1, 1/5 of
    // it 1 step from endpoint 1.
    let power_of_two = if eight {
        share1 == 4 || share1 <= 2
    } else {
        share1 <= 2
    };
    if power_of_two {
        (0, share1)
    } else {
        (1, share0)
    }
}

/// BC3's alpha of texel `at`, 8 bits.
fn alpha8(block: &[u8], at: usize) -> u8 {
    let (a0, a1) = (block[0] as i32, block[1] as i32);
    let eight = a0 > a1;
    let index = channel_index(block, at);
    let v = match index {
        0 => a0,
        1 => a1,
        6 if !eight => 0,
        7 if !eight => 255,
        _ => {
            let (from, steps) = blend(index, eight);
            let (a, b) = if from == 0 { (a0, a1) } else { (a1, a0) };
            // The move in 256ths of the difference, rounded to nearest (halves up): a
            // seventh 36, two 72, four 145; a fifth 48, two 96 (probe texel_formats,
            // bc-blends: BC3 alpha 200 13 reads 174 147 119 94 66 39, 13 200 reads
            // 48 83 130 165, and 100 37, 3 0, 129 128, 255 254 agree).
            let moved = match (eight, steps) {
                (true, 1) => 36,
                (true, 2) => 72,
                (true, _) => 145,
                (false, 1) => 48,
                (false, _) => 96,
            };
            (256 * a + moved * (b - a) + 128).div_euclid(256)
        }
    };
    v.clamp(0, 255) as u8
}

/// A BC4/BC5 channel of texel `at` (block of 8 bytes) as the float its 16-bit UNORM or
/// SNORM value reads as.
fn channel16(block: &[u8], at: usize, signed: bool) -> f32 {
    let (e0, e1) = if signed {
        // -128 blends as -127, as Direct3D's BC4 documentation says.
        let e = |b: u8| (b as i8).max(-127) as i32;
        (e(block[0]), e(block[1]))
    } else {
        (block[0] as i32, block[1] as i32)
    };
    let expand = |e: i32| {
        if signed {
            let m = e.abs();
            e.signum() * ((m << 8) | (m << 1) | (m >> 6))
        } else {
            e * 257
        }
    };
    let (max, min) = if signed { (32767, -32767) } else { (65535, 0) };
    let eight = e0 > e1;
    let index = channel_index(block, at);
    let v = match index {
        0 => expand(e0),
        1 => expand(e1),
        6 if !eight => min,
        7 if !eight => max,
        _ => {
            let (from, steps) = blend(index, eight);
            let (a, b) = if from == 0 { (e0, e1) } else { (e1, e0) };
            let step = if eight { 36 } else { 48 };
            expand(a) + (b - a) * step * steps
        }
    };
    v.clamp(min, max) as f32 / max as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H200's reads of one block of each format through a 4 x 4 resource view, as
    /// float bits, texel by texel (four channels each): clients/runtime/texture_views.cu,
    /// recorded in clients/runtime/goldens/NVIDIA_H200-580.159.04/texture_views.txt.
    const RECORDED: &str =
        include_str!("../../../clients/runtime/goldens/NVIDIA_H200-580.159.04/texture_views.txt");

    /// The recorded rows of one block (`what row N: ...`), 16 texels of four lanes.
    fn recorded(what: &str) -> Vec<[u32; 4]> {
        let mut texels = Vec::new();
        for y in 0..4 {
            let prefix = format!("{what} row {y}:");
            let line = RECORDED
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("no `{prefix}` in the recording"));
            let words: Vec<u32> = line[prefix.len()..]
                .split_whitespace()
                .map(|w| u32::from_str_radix(w, 16).unwrap())
                .collect();
            assert_eq!(words.len(), 16, "{line}");
            for x in 0..4 {
                texels.push([0, 1, 2, 3].map(|c| words[4 * x + c]));
            }
        }
        texels
    }

    /// The program that printed them: its blocks are read from its source, so that the
    /// test follows the program (and its next recording).
    const PROGRAM: &str = include_str!("../../../clients/runtime/texture_views.cu");

    /// The block's bytes from 32-bit words (little-endian, as copied).
    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The words of the program's `const uint32_t NAME[N] = {...};`.
    fn program_block(name: &str) -> Vec<u32> {
        let prefix = format!("const uint32_t {name}[");
        let line = PROGRAM
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in texture_views.cu"));
        let inside = &line[line.find('{').unwrap() + 1..line.find('}').unwrap()];
        inside
            .split(',')
            .map(|w| {
                let w = w.trim().trim_start_matches("0x").trim_end_matches('u');
                u32::from_str_radix(w, 16).unwrap()
            })
            .collect()
    }

    /// The program's `bc_block("WHAT", cudaResViewFormat..., NAME, WORDS);` calls: what it
    /// printed each block as, the view's format and the block's words.
    fn program_reads() -> Vec<(String, BlockFormat, Vec<u32>)> {
        PROGRAM
            .lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix("bc_block(\""))
            .map(|l| {
                let (what, rest) = l.split_once('"').unwrap();
                let args: Vec<&str> = rest.split(',').map(str::trim).collect();
                let format = match args[1].trim_start_matches("cudaResViewFormat") {
                    "UnsignedBlockCompressed1" => BlockFormat::Bc1,
                    "UnsignedBlockCompressed2" => BlockFormat::Bc2,
                    "UnsignedBlockCompressed3" => BlockFormat::Bc3,
                    "UnsignedBlockCompressed4" => BlockFormat::Bc4 { signed: false },
                    "SignedBlockCompressed4" => BlockFormat::Bc4 { signed: true },
                    "UnsignedBlockCompressed5" => BlockFormat::Bc5 { signed: false },
                    "SignedBlockCompressed5" => BlockFormat::Bc5 { signed: true },
                    "UnsignedBlockCompressed6H" => BlockFormat::Bc6h { signed: false },
                    "SignedBlockCompressed6H" => BlockFormat::Bc6h { signed: true },
                    "UnsignedBlockCompressed7" => BlockFormat::Bc7,
                    other => panic!("view format {other}"),
                };
                (what.to_owned(), format, program_block(args[2]))
            })
            .collect()
    }

    /// Every texel of `block` decoded against the recording; the mismatches.
    fn mismatches(what: &str, format: BlockFormat, words: &[u32]) -> Vec<String> {
        let block = bytes(words);
        let want = recorded(what);
        let mut bad = Vec::new();
        for (at, want) in want.iter().enumerate() {
            let got = decode(format, &block, at % 4, at / 4);
            if got != *want {
                bad.push(format!(
                    "{what} texel {at}: H200 {want:08x?}, decoded {got:08x?}"
                ));
            }
        }
        bad
    }

    #[test]
    fn every_recorded_bc_texel_decodes_as_the_h200_read_it() {
        let reads = program_reads();
        // One block of each format and signedness, BC1 with four and three colours.
        assert_eq!(reads.len(), 11, "{reads:?}");
        let bad: Vec<String> = reads
            .iter()
            .flat_map(|(what, f, words)| mismatches(what, *f, words))
            .collect();
        assert!(
            bad.is_empty(),
            "{} texels differ:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }

    /// BC1's interpolated colours under CU_TRSF_SRGB: clients/probes/views.c, section
    /// `bc-view-read-modes` (its block is texture_views' four-colour one), recorded in
    /// clients/probes/goldens/NVIDIA_H200-580.159.04/views.txt.
    const VIEWS: &str =
        include_str!("../../../clients/probes/goldens/NVIDIA_H200-580.159.04/views.txt");

    #[test]
    fn srgb_bc1_reads_as_the_h200_read_it() {
        let mut lines = VIEWS
            .lines()
            .skip_while(|l| *l != "BC1, SRGB = CUDA_SUCCESS")
            .map(str::trim);
        let row = lines
            .find_map(|l| l.strip_prefix("row 0:"))
            .expect("BC1, SRGB's row 0 in views.txt");
        let want: Vec<u32> = row
            .split_whitespace()
            .map(|w| u32::from_str_radix(w, 16).unwrap())
            .collect();
        assert_eq!(want.len(), 16, "{row}");
        let block = bytes(&program_block("bc1_four"));
        assert_eq!(
            &block[..],
            [0xff, 0xff, 0, 0, 0xe4, 0xe4, 0xe4, 0xe4],
            "views.c's block"
        );
        for x in 0..4 {
            let mut t = decode(BlockFormat::Bc1, &block, x, 0);
            for c in t.iter_mut().take(3) {
                *c = super::super::srgb_to_linear(f32::from_bits(*c)).to_bits();
            }
            assert_eq!(t, want[4 * x..4 * x + 4], "texel {x}");
        }
    }

    /// clients/probes/texel_formats.c and its H200 recording: blocks of other endpoints
    /// (bc-blends) and every 8-bit value's sRGB decode (srgb-u8).
    const TEXEL_PROBE: &str = include_str!("../../../clients/probes/texel_formats.c");
    const TEXEL_RECORDED: &str =
        include_str!("../../../clients/probes/goldens/NVIDIA_H200-580.159.04/texel_formats.txt");

    /// A recorded section's reads: each read's name (a line that is no call's result, or
    /// srgb-u8's texture object) and its words (the `texels` lines after it).
    fn section_reads(section: &str) -> Vec<(String, Vec<u32>)> {
        let body = TEXEL_RECORDED
            .split(&format!("## {section}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no section {section}"));
        let mut reads: Vec<(String, Vec<u32>)> = Vec::new();
        for line in body.lines().take_while(|l| !l.starts_with("## ")) {
            if let Some((_, words)) = line
                .trim()
                .split_once(':')
                .filter(|_| line.starts_with("  texels"))
            {
                let last = reads.last_mut().expect("texels after a name");
                last.1.extend(
                    words
                        .split_whitespace()
                        .map(|w| u32::from_str_radix(w, 16).unwrap()),
                );
            } else if !line.contains(" = ") || line.contains(", SRGB = ") {
                reads.push((line.to_owned(), Vec::new()));
            }
        }
        reads
    }

    /// The block a bc-blends read is named for, as texel_formats.c builds it.
    fn blend_block(name: &str) -> (BlockFormat, Vec<u32>) {
        // The probe's constant words, checked against its source so the test follows it.
        for needle in [
            "0xc6880000u | (uint32_t)e1 << 8 | e0",
            "block[1] = 0xfac688fau",
            "b3[2] = 0x07e0f800u",
            "b3[3] = 0x1b1b1b1bu",
            "{0x76543210u, 0xfedcba98u, bc1[i][0], bc1[i][1]}",
            "{0xc68800ffu, 0xfac688fau, bc1[i][0], bc1[i][1]}",
        ] {
            assert!(
                TEXEL_PROBE.contains(needle),
                "texel_formats.c lacks `{needle}`"
            );
        }
        let channel = |e0: &str, e1: &str| {
            let e = |v: &str| v.parse::<i32>().unwrap() as u8 as u32;
            0xc688_0000 | e(e1) << 8 | e(e0)
        };
        let hex = |w: &str| u32::from_str_radix(w, 16).unwrap();
        let f: Vec<&str> = name.split_whitespace().collect();
        match f[..] {
            ["BC4", sign, e0, e1] => (
                BlockFormat::Bc4 {
                    signed: sign == "signed",
                },
                vec![channel(e0, e1), 0xfac6_88fa],
            ),
            ["BC3", "alpha", e0, e1] => (
                BlockFormat::Bc3,
                vec![channel(e0, e1), 0xfac6_88fa, 0x07e0_f800, 0x1b1b_1b1b],
            ),
            ["BC5", "signed", a, b, "/", c, d] => (
                BlockFormat::Bc5 { signed: true },
                vec![channel(a, b), 0xfac6_88fa, channel(c, d), 0xfac6_88fa],
            ),
            ["BC1", w0, w1] => (BlockFormat::Bc1, vec![hex(w0), hex(w1)]),
            ["BC2", "colours", w0, w1] => (
                BlockFormat::Bc2,
                vec![0x7654_3210, 0xfedc_ba98, hex(w0), hex(w1)],
            ),
            ["BC3", "colours", w0, w1] => (
                BlockFormat::Bc3,
                vec![0xc688_00ff, 0xfac6_88fa, hex(w0), hex(w1)],
            ),
            _ => panic!("bc-blends read {name}"),
        }
    }

    #[test]
    fn every_bc_blend_texel_decodes_as_the_h200_read_it() {
        let reads = section_reads("bc-blends");
        // Seven endpoint pairs of BC4 (both signednesses) and BC3 alpha, four signed pairs
        // of BC4 and BC5, five colour blocks of BC1, BC2 and BC3.
        assert_eq!(reads.len(), 7 * 3 + 4 * 2 + 5 * 3, "{reads:?}");
        let mut bad = Vec::new();
        for (name, words) in &reads {
            assert_eq!(words.len(), 64, "{name}");
            let (format, block) = blend_block(name);
            let block = bytes(&block);
            for at in 0..16 {
                let got = decode(format, &block, at % 4, at / 4);
                if got[..] != words[4 * at..4 * at + 4] {
                    bad.push(format!(
                        "{name} texel {at}: H200 {:08x?}, decoded {got:08x?}",
                        &words[4 * at..4 * at + 4]
                    ));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "{} texels differ:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }

    /// The 8-bit sRGB decode against the H200's srgb-u8 (value 4i + c in texel i's channel
    /// c of the first read, but alpha, which is linear; 4i + 3 in texel i's red of the
    /// second): 239 of the 256 values exactly, the linear segment's (n up to 12) among
    /// them, the others one step of 8 significant bits away (divergences.txt).
    #[test]
    fn srgb_decodes_every_8_bit_value_within_a_step_of_the_h200() {
        let reads = section_reads("srgb-u8");
        assert_eq!(reads.len(), 2, "{reads:?}");
        let mut want = [0u32; 256];
        for i in 0..64 {
            for c in 0..3 {
                want[4 * i + c] = reads[0].1[4 * i + c];
            }
            // Alpha is not decoded: the value as a UNORM read.
            assert_eq!(
                f32::from_bits(reads[0].1[4 * i + 3]),
                (4 * i + 3) as f32 / 255.0
            );
            want[4 * i + 3] = reads[1].1[4 * i];
        }
        let mut exact = 0;
        let mut inexact = Vec::new();
        for (v, want) in want.iter().enumerate() {
            let got = super::super::srgb_to_linear(v as f32 / 255.0).to_bits();
            assert_eq!(
                got & 0xffff,
                0,
                "value {v}: {got:08x} has more than 8 significant bits"
            );
            let steps = ((got >> 16) as i32 - (want >> 16) as i32).abs();
            assert!(steps <= 1, "value {v}: H200 {want:08x}, decoded {got:08x}");
            exact += usize::from(steps == 0);
            if steps != 0 {
                inexact.push(v);
            }
        }
        assert!(
            inexact.iter().all(|&v| v > 12),
            "the linear segment's values: {inexact:?} inexact"
        );
        assert!(exact >= 239, "{exact} of 256 values exact, {inexact:?} not");
    }
}
