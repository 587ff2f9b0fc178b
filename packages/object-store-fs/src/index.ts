export * as FsObjectStore from "./FsObjectStore.js"
