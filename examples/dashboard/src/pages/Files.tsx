/**
 * The user's files on a deployment (uploaded ones and those the agent made):
 * the list, downloads, and uploads with progress.
 */
import * as id from "../api/ids"
import { call } from "../api/runtime"
import { downloadUrl } from "../api/upload"
import { FilePicker, UploadList, useUploads } from "../components/Uploads"
import { Badge, ErrorNotice, formatBytes, Loading, PageHeading, TableWrap, When } from "../components/ui"
import { useResource } from "../hooks"
import { Link, pathOf } from "../router"

export const FilesPage = ({ deploymentId }: { readonly deploymentId: string }) => {
  const files = useResource(
    (signal) => call((client) => client.files.list({ path: { deploymentId: id.deployment(deploymentId) } }), signal),
    [deploymentId]
  )
  const uploads = useUploads(deploymentId, () => files.reload())
  const list = files.data?.files ?? []
  return (
    <>
      <PageHeading title={`Files of ${deploymentId}`}>
        Files of deployment <code>{deploymentId}</code>
      </PageHeading>
      <nav aria-label="Deployment" class="subnav">
        <Link href={pathOf("deployments", deploymentId, "chat")}>Chat</Link>
      </nav>
      <section aria-labelledby="upload-heading" class="card">
        <h2 id="upload-heading">Upload</h2>
        <FilePicker inputId="files-upload" label="Choose files to upload" onFiles={uploads.add} />
        <UploadList uploads={uploads.uploads} onRemove={uploads.remove} removeLabel="Dismiss" />
      </section>
      <section aria-labelledby="list-heading">
        <div class="section-head">
          <h2 id="list-heading">Your files</h2>
          <button type="button" class="secondary" onClick={files.reload} disabled={files.loading}>
            Refresh
          </button>
        </div>
        <ErrorNotice error={files.error} context="The files could not be listed" />
        {files.loading && files.data === undefined && <Loading />}
        {files.data !== undefined && (list.length === 0 ? <p class="muted">No files yet.</p> : (
          <TableWrap label="Files table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Size</th>
                  <th scope="col">Type</th>
                  <th scope="col">From</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.map((file) => (
                  <tr key={file.key}>
                    <th scope="row">
                      {file.status === "ready" ? (
                        <a href={downloadUrl(deploymentId, file.origin === "agent" ? file.filename : file.key)} download={file.filename}>
                          {file.filename}
                          <span class="visually-hidden"> (download)</span>
                        </a>
                      ) : file.filename}
                    </th>
                    <td class="nowrap">{formatBytes(file.size)}</td>
                    <td>
                      <code>{file.content_type}</code>
                    </td>
                    <td>{file.origin === "agent" ? "agent" : "you"}</td>
                    <td>
                      <Badge tone={file.status === "ready" ? "ok" : "warn"}>{file.status}</Badge>
                    </td>
                    <td>
                      <When value={file.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ))}
      </section>
    </>
  )
}
