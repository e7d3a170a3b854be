// The dashboard's entry point: live collections shared by the pages (each loaded when a page
// first shows it), and a hash router.

import { LiveCollection, setToken, token } from './api.js';
import { ClusterView } from './cluster.js';
import { costPage } from './cost.js';
import { jobPage } from './job.js';
import { jobsPage } from './pages.js';
import { queuesPage } from './queues.js';
import { servicePage } from './service.js';
import { servicesPage } from './services.js';

const status = document.getElementById('status');
const live = {
  onError: (error) => { status.textContent = String(error.message || error); },
  onData: () => { status.textContent = ''; },
};
const group = '/apis/strata.dev/v1alpha1';
// An address with ?token=T (how strata up's admin opens the dashboard) signs the tab in; the
// token is then dropped from the address bar and the history.
const signIn = new URLSearchParams(location.search).get('token');
if (signIn) {
  setToken(signIn);
  history.replaceState(null, '', location.pathname + location.hash);
}

const collections = {
  nodes: new LiveCollection('/api/v1/nodes', live),
  pods: new LiveCollection('/api/v1/pods', live),
  jobs: new LiveCollection(`${group}/jobs`, live),
  queues: new LiveCollection(`${group}/queues`, live),
  services: new LiveCollection(`${group}/services`, live),
};

const tokenInput = document.getElementById('token');
tokenInput.value = token();
tokenInput.addEventListener('change', () => { setToken(tokenInput.value); location.reload(); });

const pages = {
  // #cluster/TEXT opens the map searching for TEXT (a job's page links to its GPUs so).
  cluster: (parent, search = '') => {
    const view = new ClusterView(parent, collections.nodes, collections.pods, search);
    return () => view.destroy();
  },
  queues: (parent) => queuesPage(parent, collections),
  jobs: (parent) => jobsPage(parent, collections),
  services: (parent) => servicesPage(parent, collections),
  cost: (parent) => costPage(parent),
};
// Pages of one object: #jobs/NS/NAME, #services/NS/NAME.
const objectPages = {
  jobs: (parent, namespace, name) => jobPage(parent, namespace, name),
  services: (parent, namespace, name) => servicePage(parent, namespace, name),
};

let teardown = null;
function route() {
  const [name, ...rest] = (location.hash || '#cluster').slice(1).split('/').map(decodeURIComponent);
  const view = document.getElementById('view');
  if (teardown) teardown();
  view.innerHTML = '';
  if (rest.length === 2 && objectPages[name]) {
    teardown = objectPages[name](view, rest[0], rest[1]);
  } else if (name === 'cluster') {
    teardown = pages.cluster(view, rest.join('/'));
  } else {
    teardown = (pages[name] || pages.cluster)(view);
  }
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('active', a.getAttribute('href') === `#${name}`);
  }
}
window.addEventListener('hashchange', route);
route();
