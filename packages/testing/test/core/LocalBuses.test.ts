/**
 * The buses of one process pass the event bus and reply bus contracts.
 */
import { EventBus, ReplyBus } from "@hosting/core"
import { EventBusSuite, ReplyBusSuite } from "@hosting/testing"

EventBusSuite.run("local", EventBus.layerLocal)
ReplyBusSuite.run("local", ReplyBus.layerLocal)
