//! A small `strftime` for `strftime_now(format)`, over a UTC Unix timestamp.
//!
//! Supports the directives chat templates use: `%Y %y %m %d %e %j %B %b %h %A %a %H %I %M %S %p
//! %F %D %T %%`, glibc's `%-d`-style "no padding" flag, and `%Z`/`%z` (empty, as for Python's
//! naive `datetime.now()`). Unknown directives are copied through, as glibc does.

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u32,   // 1..=12
    day: u32,     // 1..=31
    weekday: u32, // 0 = Monday
    yday: u32,    // 1..=366
    hour: u32,
    minute: u32,
    second: u32,
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn civil(unix: i64) -> Civil {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    const CUMULATIVE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let leap = u32::from(month > 2 && is_leap(year));
    Civil {
        year,
        month,
        day,
        weekday: (days + 3).rem_euclid(7) as u32, // 1970-01-01 was a Thursday
        yday: CUMULATIVE[month as usize - 1] + day + leap,
        hour: secs / 3600,
        minute: secs / 60 % 60,
        second: secs % 60,
    }
}

/// Formats the UTC time `unix` (seconds since the epoch) with a C `strftime` format.
pub(crate) fn strftime(unix: i64, format: &str) -> String {
    let t = civil(unix);
    let mut out = String::with_capacity(format.len() + 16);
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = chars.next();
        let unpadded = spec == Some('-');
        if unpadded {
            spec = chars.next();
        }
        let num = |n: u32, width: usize| {
            if unpadded {
                n.to_string()
            } else {
                format!("{n:0width$}")
            }
        };
        let hour12 = if t.hour % 12 == 0 { 12 } else { t.hour % 12 };
        match spec {
            Some('Y') => out.push_str(&t.year.to_string()),
            Some('y') => out.push_str(&num(t.year.rem_euclid(100) as u32, 2)),
            Some('m') => out.push_str(&num(t.month, 2)),
            Some('d') => out.push_str(&num(t.day, 2)),
            Some('e') => out.push_str(&format!("{:>2}", t.day)),
            Some('j') => out.push_str(&num(t.yday, 3)),
            Some('B') => out.push_str(MONTHS[t.month as usize - 1]),
            Some('b' | 'h') => out.push_str(&MONTHS[t.month as usize - 1][..3]),
            Some('A') => out.push_str(WEEKDAYS[t.weekday as usize]),
            Some('a') => out.push_str(&WEEKDAYS[t.weekday as usize][..3]),
            Some('H') => out.push_str(&num(t.hour, 2)),
            Some('I') => out.push_str(&num(hour12, 2)),
            Some('M') => out.push_str(&num(t.minute, 2)),
            Some('S') => out.push_str(&num(t.second, 2)),
            Some('p') => out.push_str(if t.hour < 12 { "AM" } else { "PM" }),
            Some('F') => out.push_str(&format!("{}-{:02}-{:02}", t.year, t.month, t.day)),
            Some('D') => out.push_str(&format!(
                "{:02}/{:02}/{:02}",
                t.month,
                t.day,
                t.year.rem_euclid(100)
            )),
            Some('T') => out.push_str(&format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second)),
            Some('Z' | 'z') => {}
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                if unpadded {
                    out.push('-');
                }
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_dates() {
        // 2024-07-26 00:00:00 UTC, a Friday.
        let t = 1_721_952_000;
        assert_eq!(strftime(t, "%d %b %Y"), "26 Jul 2024");
        assert_eq!(strftime(t, "%Y-%m-%d"), "2024-07-26");
        assert_eq!(strftime(t, "%B %d, %Y"), "July 26, 2024");
        assert_eq!(
            strftime(t, "%A %j %-m/%-d %I%p %%"),
            "Friday 208 7/26 12AM %"
        );
        assert_eq!(strftime(0, "%F %T %a"), "1970-01-01 00:00:00 Thu");
        assert_eq!(strftime(951_782_400, "%F %j"), "2000-02-29 060");
    }
}
