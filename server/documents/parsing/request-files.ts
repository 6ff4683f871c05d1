/**
 * The files of one parse request's private directory (ParseRequest.attachmentsDir), named in one
 * place for the parser process that writes them and the pool that reads them. The pool reads the
 * paths it builds itself, never one a parser names in its reply: a parser reads hostile files, and a
 * path taken from it could point at any file the service may read.
 */
import { join } from 'node:path'

/** The file a parsed outcome's blocks are written to, as JSON text (a channel message of 10,000 blocks stalled both ends). */
export const blocksFile = (requestDir: string) => join(requestDir, 'blocks.json')

/** The file the `index`-th attachment (of an email or ZIP) is written to. */
export const attachmentFile = (requestDir: string, index: number) => join(requestDir, `${index}.bin`)
