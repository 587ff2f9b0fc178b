/**
 * The errors of conversations, their messages and replies, and files.
 * Part of the domain's errors (Errors.ts re-exports them).
 */
import { Schema } from "effect"

/** No conversation with that id for the caller on that deployment. */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", {
  conversation: Schema.String
}) {
  readonly code = "conversation_not_found"
  override get message() {
    return `Conversation ${this.conversation} does not exist.`
  }
}

/** No ready file with that key owned by the caller. */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", {
  key: Schema.String
}) {
  readonly code = "file_not_found"
  override get message() {
    return `File ${this.key} does not exist, is not ready, or is not yours.`
  }
}

/** The upload is larger than the size reserved for the file. */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  limit: Schema.Number
}) {
  readonly code = "file_too_large"
  override get message() {
    return `The upload is larger than the ${this.limit} bytes reserved for this file.`
  }
}

/** Completing a file whose bytes have not all arrived. */
export class UploadIncomplete extends Schema.TaggedError<UploadIncomplete>()("UploadIncomplete", {
  key: Schema.String,
  expected: Schema.Number,
  received: Schema.Number
}) {
  readonly code = "upload_incomplete"
  override get message() {
    return `File ${this.key} has ${this.received} of its ${this.expected} bytes; upload the content before completing it.`
  }
}

/** The reservation's time to upload has passed: its bytes are no longer taken. */
export class UploadExpired extends Schema.TaggedError<UploadExpired>()("UploadExpired", {
  key: Schema.String
}) {
  readonly code = "upload_expired"
  override get message() {
    return `The reservation of file ${this.key} has expired; reserve the file again to upload it.`
  }
}

/** An upload to a file that is complete: a ready file's bytes never change. */
export class FileComplete extends Schema.TaggedError<FileComplete>()("FileComplete", {
  key: Schema.String
}) {
  readonly code = "file_complete"
  override get message() {
    return `File ${this.key} is complete and its bytes never change; reserve a new file to upload other bytes.`
  }
}

/** The object store cannot be used now. */
export class FilesUnavailable extends Schema.TaggedError<FilesUnavailable>()("FilesUnavailable", {
  details: Schema.String
}) {
  readonly code = "service_unavailable"
  override get message() {
    return this.details
  }
}

/** An attachment key that is not a ready file of the caller on the deployment. */
export class AttachmentInvalid extends Schema.TaggedError<AttachmentInvalid>()("AttachmentInvalid", {
  key: Schema.String
}) {
  readonly code = "invalid_attachment"
  override get message() {
    return `attachments: ${this.key} is not a ready file of yours on this deployment; upload it through the files API first.`
  }
}

/** The conversation reached its per-thread message limit and takes no more messages. */
export class MessageLimitReached extends Schema.TaggedError<MessageLimitReached>()("MessageLimitReached", {
  limit: Schema.Number
}) {
  readonly code = "message_limit_reached"
  override get message() {
    return `This conversation reached its limit of ${this.limit} messages; start a new conversation.`
  }
}

/**
 * A send refused because a reply of the conversation is still streaming and
 * the send's strategy (its own, or its deployment's) is `reject`.
 */
export class ReplyInProgress extends Schema.TaggedError<ReplyInProgress>()("ReplyInProgress", {
  conversation: Schema.String
}) {
  readonly code = "reply_in_progress"
  override get message() {
    return `A reply of conversation ${this.conversation} is still streaming and this send rejects concurrent sends; ` +
      "send again once it ends, cancel it, or send with concurrent_send \"queue\" or \"interrupt\"."
  }
}

/** More files attached than a message may carry. */
export class TooManyAttachments extends Schema.TaggedError<TooManyAttachments>()("TooManyAttachments", {
  count: Schema.Number,
  limit: Schema.Number
}) {
  readonly code = "too_many_attachments"
  override get message() {
    return `${this.count} files are attached; a message may carry at most ${this.limit}.`
  }
}
