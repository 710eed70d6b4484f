/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's view of a process, read the same way from both sides: the host
 * agent parses its own /proc/self/smaps and status, the run parses the text
 * mmp_space_smaps() writes, with the same parser, so what is compared is what
 * a user of either reads.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kdiff.h"

#define F(name, field)	{ name, offsetof(struct kd_smaps, field) }

const struct kd_smaps_field kd_smaps_fields[] = {
	F("Rss", rss),
	F("Pss", pss),
	F("Pss_Dirty", pss_dirty),
	F("Shared_Clean", shared_clean),
	F("Shared_Dirty", shared_dirty),
	F("Private_Clean", private_clean),
	F("Private_Dirty", private_dirty),
	F("Anonymous", anonymous),
	F("AnonHugePages", anon_huge),
	F("ShmemPmdMapped", shmem_pmd),
	F("FilePmdMapped", file_pmd),
	F("Shared_Hugetlb", shared_hugetlb),
	F("Private_Hugetlb", private_hugetlb),
	F("Swap", swap),
	F("Locked", locked),
	F("THPeligible", thp_eligible),
};
const unsigned int kd_nr_smaps_fields = sizeof(kd_smaps_fields) / sizeof(kd_smaps_fields[0]);

/*
 * The VmFlags mnemonics both the kernel and the library print, in the
 * kernel's order (its bit order): others (the kernel's "dd", ...) are left
 * out of the comparison.
 */
static const char *const known_flags[] = {
	"rd", "wr", "ex", "sh", "mr", "mw", "me", "ms", "gd", "gu", "lo", "sr", "rr", "dc", "lf",
	"ac", "wf", "sd", "hg", "nh", "mg", "dp", "sl",
};

static void keep_known_flags(const char *line, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(known_flags) / sizeof(known_flags[0]); i++) {
		char want[8];

		snprintf(want, sizeof(want), " %s", known_flags[i]);
		/* A mnemonic is two letters followed by a space or the end of the line. */
		for (const char *p = strstr(line, want); p; p = strstr(p + 1, want))
			if (p[3] == ' ' || p[3] == '\n' || p[3] == '\0') {
				len += snprintf(out + len, size - len, "%s%s", len ? " " : "",
						known_flags[i]);
				break;
			}
		if (len >= size)
			break;
	}
}

int kd_parse_smaps(FILE *f, struct kd_state *st)
{
	struct kd_smaps *v = NULL;
	char line[512];

	st->nvmas = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char *colon;

		if (sscanf(line, "%llx-%llx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			v = NULL;
			if (end <= KD_WIN_BASE || start >= KD_WIN_END || st->nvmas == KD_MAX_VMAS)
				continue;
			v = &st->vmas[st->nvmas++];
			memset(v, 0, sizeof(*v));
			v->start = start;
			v->end = end;
			continue;
		}
		if (!v || !(colon = strchr(line, ':')))
			continue;
		*colon = '\0';
		if (!strcmp(line, "VmFlags")) {
			keep_known_flags(colon + 1, v->vmflags, sizeof(v->vmflags));
			continue;
		}
		for (unsigned int i = 0; i < kd_nr_smaps_fields; i++)
			if (!strcmp(line, kd_smaps_fields[i].name)) {
				*(uint64_t *)((char *)v + kd_smaps_fields[i].off) =
					strtoull(colon + 1, NULL, 10);
				break;
			}
	}
	return st->nvmas;
}

int kd_parse_status(FILE *f, struct kd_status *st)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
		{ "RssAnon", offsetof(struct kd_status, rss_anon) },
		{ "RssFile", offsetof(struct kd_status, rss_file) },
		{ "RssShmem", offsetof(struct kd_status, rss_shmem) },
		{ "VmPTE", offsetof(struct kd_status, vm_pte) },
		{ "HugetlbPages", offsetof(struct kd_status, hugetlb) },
	};
	unsigned int found = 0;
	char line[256];

	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		for (unsigned int i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(line, fields[i].name)) {
				*(uint64_t *)((char *)st + fields[i].off) = strtoull(colon + 1, NULL, 10);
				found |= 1u << i;
			}
	}
	return found == (1u << (sizeof(fields) / sizeof(fields[0]))) - 1 ? 0 : -1;
}
