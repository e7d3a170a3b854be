// The dashboard's entry point: live collections shared by every page, and a hash router.

import { LiveCollection, setToken, token } from './api.js';
import { ClusterView } from './cluster.js';
import { costPage, jobsPage, queuesPage } from './pages.js';
import { servicesPage } from './services.js';

const group = '/apis/strata.dev/v1alpha1';
const collections = {
  nodes: new LiveCollection('/api/v1/nodes'),
  pods: new LiveCollection('/api/v1/pods'),
  jobs: new LiveCollection(`${group}/jobs`),
  queues: new LiveCollection(`${group}/queues`),
  services: new LiveCollection(`${group}/services`),
};

const status = document.getElementById('status');
const onError = (error) => { status.textContent = String(error.message || error); };
for (const c of Object.values(collections)) {
  c.subscribe(() => { status.textContent = ''; });
  c.start(onError);
}

const tokenInput = document.getElementById('token');
tokenInput.value = token();
tokenInput.addEventListener('change', () => { setToken(tokenInput.value); location.reload(); });

const pages = {
  cluster: (parent) => {
    const view = new ClusterView(parent, collections.nodes, collections.pods);
    return () => view.destroy();
  },
  queues: (parent) => queuesPage(parent, collections),
  jobs: (parent) => jobsPage(parent, collections),
  services: (parent) => servicesPage(parent, collections),
  cost: (parent) => costPage(parent),
};

let teardown = null;
function route() {
  const name = (location.hash || '#cluster').slice(1);
  const page = pages[name] || pages.cluster;
  if (teardown) teardown();
  const view = document.getElementById('view');
  view.innerHTML = '';
  teardown = page(view);
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('active', a.getAttribute('href') === `#${name}`);
  }
}
window.addEventListener('hashchange', route);
route();
