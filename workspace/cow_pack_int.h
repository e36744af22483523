/*
 * The change set's bytes (cow_pack.c writes them, cow_unpack.c reads
 * them back), all integers little-endian:
 *
 *	magic		8 bytes, COW_PACK_MAGIC
 *	count		u32, the changes that follow, sorted by
 *			hostexec_pathcmp, no path twice
 *	each change:
 *	  kind		u8, enum cow_kind
 *	  base_by	u8, enum cow_base_by: 0 for an ADDED change, else
 *			COW_BASE_SUM or COW_BASE_UNKNOWN
 *	  base_mode	u32, st_mode of the base (0 for ADDED)
 *	  base_sum	COW_SUM_LEN bytes (zeros unless COW_BASE_SUM of a
 *			file or link)
 *	  new_mode	u32, st_mode in the layer (0 for DELETED)
 *	  path_len	u16, then the path: relative, no "", ".", ".." or
 *			empty parts, no NUL, under PATH_MAX
 *	  data_len	u32, then the data: a file's bytes, a link's target
 *			(no NUL, under PATH_MAX), nothing for the rest
 *
 * Nothing follows the last change. A version is a new magic: an older
 * warren refuses a newer set by name rather than misreading it.
 */
#ifndef WARREN_COW_PACK_INT_H
#define WARREN_COW_PACK_INT_H

#define COW_PACK_MAGIC		"WRNCHG1\n"
#define COW_PACK_MAGIC_LEN	8
/* kind, base_by, base_mode, base_sum, new_mode, path_len, data_len */
#define COW_PACK_FIXED		(1 + 1 + 4 + COW_SUM_LEN + 4 + 2 + 4)

#endif
